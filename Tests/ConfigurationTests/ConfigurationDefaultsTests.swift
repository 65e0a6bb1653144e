import Bluetooth
import Configuration
import Foundation
import TestSupport
import Testing

/// An empty object is a valid configuration: every key has a default.
@Suite struct ConfigurationDefaultsTests {
    private func load(_ json: String) throws -> BridgeConfiguration {
        try ConfigurationLoader().decode(Data(json.utf8), file: "test.json")
    }

    @Test func anEmptyObjectGetsTheDocumentedDefaults() throws {
        let configuration = try load("{}")
        #expect(configuration == BridgeConfiguration())
        #expect(configuration.gatewayID == "blebridge")
        #expect(configuration.bluetooth.adapter == "hci0")
        #expect(configuration.bluetooth.bus == .system)
        #expect(configuration.bluetooth.maxConnections == 5)
        #expect(configuration.bluetooth.connectTimeout == .seconds(30))
        #expect(configuration.bluetooth.cachedResolveTimeout == .seconds(5))
        #expect(configuration.bluetooth.scan.mode == .active)
        #expect(configuration.bluetooth.scan.duplicates)
        #expect(configuration.bluetooth.scan.deviceTTL == .seconds(300))
        #expect(configuration.mqtt.url.description == "mqtt://127.0.0.1:1883")
        #expect(configuration.mqtt.protocolVersion == .v5)
        #expect(configuration.mqtt.keepAlive == .seconds(30))
        #expect(configuration.mqtt.qos == 1)
        #expect(configuration.outbox.maxAge == .seconds(7 * 86400))
        #expect(configuration.outbox.inflight == 64)
        #expect(configuration.homeAssistant.enabled)
        #expect(configuration.commands.rateLimit.description == "10/s")
        #expect(configuration.devices.isEmpty)
    }

    @Test func theClientIDDefaultsToTheGatewayID() throws {
        #expect(try load(#"{"gateway_id": "attic"}"#).mqtt.clientID == "attic")
        #expect(try load(#"{"gateway_id": "attic", "mqtt": {"client_id": "x"}}"#).mqtt.clientID == "x")
    }

    @Test func aSchemaReferenceForEditorsIsIgnored() throws {
        #expect(try load(#"{"$schema": "./docs/config.schema.json"}"#) == BridgeConfiguration())
    }

    @Test func theCachedResolveLimitIsADurationAndZeroTurnsItOff() throws {
        #expect(
            try load(#"{"bluetooth": {"cached_resolve_timeout": "8s"}}"#).bluetooth.cachedResolveTimeout == .seconds(8))
        #expect(try load(#"{"bluetooth": {"cached_resolve_timeout": "0s"}}"#).bluetooth.cachedResolveTimeout == nil)
        #expect(throws: ConfigurationError.self) { try load(#"{"bluetooth": {"cached_resolve_timeout": "10m"}}"#) }
    }

    @Test func nullMeansTheDefault() throws {
        #expect(try load(#"{"mqtt": {"username": null, "tls": null}, "outbox": null}"#) == BridgeConfiguration())
    }

    @Test func aDeviceWithNothingToConnectForIsPassive() throws {
        let configuration = try load(
            #"{"devices": [{"id": "b", "match": {"service": "bthome"}, "advertisement": {"decoder": "bthome", "bind_key": "00112233445566778899aabbccddeeff"}}]}"#
        )
        let device = try #require(configuration.devices.first)
        #expect(device.connection == .passive)
        #expect(device.name == "b")
        #expect(device.match.service == BluetoothUUID(UInt16(0xFCD2)))
        #expect(device.advertisement?.bindKey?.count == 16)
        #expect(device.advertisement?.bindKey?.last == 0xFF)
    }

    @Test func aDevicePasskeyIsSixDigitsAtMost() throws {
        let withPasskey = try load(
            #"{"devices": [{"id": "lock", "match": {"address": "C0:FF:EE:00:00:06"}, "passkey": 123456}]}"#)
        #expect(withPasskey.devices.first?.passkey == 123_456)
        let without = try load(#"{"devices": [{"id": "lock", "match": {"address": "C0:FF:EE:00:00:06"}}]}"#)
        #expect(without.devices.first?.passkey == nil)
        #expect(throws: ConfigurationError.self) {
            try load(#"{"devices": [{"id": "lock", "match": {"name_prefix": "L"}, "passkey": -1}]}"#)
        }
    }

    @Test func aRawGATTEntryMayNameAService() throws {
        let configuration = try load(
            #"""
            {"devices": [{"id": "panel", "match": {"name_prefix": "P"}, "connection": "keep_connected"}],
             "commands": {"raw_gatt": {"enabled": true, "allow": [
               {"device": "panel", "characteristic": "2a19", "service": "battery", "operations": ["read"]},
               {"device": "panel", "characteristic": "2a00", "operations": ["read"]}]}}}
            """#)
        let raw = configuration.commands.rawGATT
        let battery = BluetoothUUID(UInt16(0x2A19))
        #expect(raw.allow.first?.service == BluetoothUUID(UInt16(0x180F)))
        #expect(raw.allow.last?.service == nil)
        #expect(
            raw.allowedOperations(device: "panel", characteristic: battery, service: BluetoothUUID(UInt16(0x180F)))
                == [.read])
        #expect(
            raw.allowedOperations(device: "panel", characteristic: battery, service: BluetoothUUID(UInt16(0x180A)))
                .isEmpty)
        #expect(
            raw.allowedOperations(
                device: "panel", characteristic: BluetoothUUID(UInt16(0x2A00)), service: BluetoothUUID(UInt16(0x1800)))
                == [.read])
    }

    @Test func busAcceptsAPrivateAddress() throws {
        let configuration = try load(#"{"bluetooth": {"bus": "unix:path=/tmp/bus"}}"#)
        #expect(configuration.bluetooth.bus == .address("unix:path=/tmp/bus"))
    }

    @Test func brokerURLsParseHostsPortsAndTLS() throws {
        #expect(
            try load(#"{"mqtt": {"url": "mqtts://broker.local"}}"#).mqtt.url
                == BrokerURL(host: "broker.local", port: 8883, usesTLS: true))
        #expect(try load(#"{"mqtt": {"url": "mqtt://[::1]:1884"}}"#).mqtt.url == BrokerURL(host: "::1", port: 1884))
    }

    @Test func rateLimitsAcceptCountPerUnitOrPerDuration() throws {
        #expect(
            try load(#"{"commands": {"rate_limit": "100/m"}}"#).commands.rateLimit
                == RateLimit(count: 100, period: .seconds(60)))
        #expect(
            try load(#"{"commands": {"rate_limit": "5/10s"}}"#).commands.rateLimit
                == RateLimit(count: 5, period: .seconds(10)))
    }

    @Test func thePasswordComesFromAFileOrTheEnvironment() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "blebridge-pw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("password")
        try "s3cret\n".write(to: file, atomically: true, encoding: .utf8)
        let fromFile = try load(#"{"mqtt": {"username": "u", "password_file": "\#(file.path)"}}"#)
        #expect(try fromFile.mqtt.password() == "s3cret")
        let fromEnvironment = try load(#"{"mqtt": {"username": "u", "password_env": "BROKER_PW"}}"#)
        #expect(try fromEnvironment.mqtt.password(environment: ["BROKER_PW": "pw"]) == "pw")
        let missing = try requireThrows(ConfigurationError.self) {
            try fromEnvironment.mqtt.password(environment: [:])
        }
        #expect(missing.keyPath == "mqtt.password_env")
        #expect(try load("{}").mqtt.password() == nil)
    }
}
