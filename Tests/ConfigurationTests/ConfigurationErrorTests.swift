import Configuration
import Foundation
import TestSupport
import Testing

/// Every rejected configuration names the key path, says what is accepted and has a catchable code.
@Suite struct ConfigurationErrorTests {
    /// fuzz-configuration's hang: a string whose last byte is a backslash at the end of the file
    /// (`{"a":"\`, and the 15-byte input in Fuzz/Findings) looped forever; now it is refused.
    @Test(
        arguments: [
            [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0x5C],
            [0x7B, 0x0A, 0x20, 0x20, 0x22, 0x5C, 0x5C, 0x77, 0x5C, 0x5C, 0x5C, 0x5C, 0x5C, 0x5C, 0x5C],
        ] as [[UInt8]])
    func aStringEndingInABackslashAtTheEndOfTheFileIsRefused(_ bytes: [UInt8]) {
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader().decode(Data(bytes)) }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var json: String
        var code: ConfigurationError.Code
        var keyPath: String
        var mentions: String
        var testDescription: String { "\(code) at \(keyPath)" }
    }

    static let device = #""id": "d", "match": {"address": "C0:FF:EE:00:00:01"}"#

    static let cases: [Case] = [
        Case(
            json: #"{"gateway_idd": "x"}"#, code: .unknownKey, keyPath: "gateway_idd",
            mentions: "did you mean \"gateway_id\""),
        Case(
            json: #"{"mqtt": {"qos": "1"}}"#, code: .wrongType, keyPath: "mqtt.qos", mentions: "an integer from 0 to 2"),
        Case(json: #"{"mqtt": {"qos": 3}}"#, code: .invalidValue, keyPath: "mqtt.qos", mentions: "from 0 to 2"),
        Case(json: #"{"mqtt": {"qos": 1.5}}"#, code: .wrongType, keyPath: "mqtt.qos", mentions: "not an integer"),
        Case(
            json: #"{"mqtt": {"keepalive": "30 seconds"}}"#, code: .invalidValue, keyPath: "mqtt.keepalive",
            mentions: "\"30s\""),
        Case(
            json: #"{"mqtt": {"keepalive": 30}}"#, code: .wrongType, keyPath: "mqtt.keepalive",
            mentions: "a duration string"),
        Case(json: #"{"mqtt": {"url": "tcp://x"}}"#, code: .invalidValue, keyPath: "mqtt.url", mentions: "mqtt://"),
        Case(
            json: #"{"mqtt": {"url": "mqtt://u:p@x"}}"#, code: .invalidValue, keyPath: "mqtt.url",
            mentions: "mqtt.username"),
        Case(
            json: #"{"mqtt": {"protocol": 5}}"#, code: .wrongType, keyPath: "mqtt.protocol",
            mentions: "\"3.1.1\" or \"5\""),
        Case(
            json: #"{"mqtt": {"password_file": "/p"}}"#, code: .missingKey, keyPath: "mqtt.username",
            mentions: "needs a username"),
        Case(
            json: #"{"mqtt": {"username": "u", "password_file": "/p", "password_env": "P"}}"#, code: .conflict,
            keyPath: "mqtt.password_env", mentions: "not both"),
        Case(
            json: #"{"mqtt": {"tls": {"ca_file": "/ca.pem"}}}"#, code: .conflict, keyPath: "mqtt.tls",
            mentions: "mqtts://"),
        Case(
            json: #"{"mqtt": {"url": "mqtts://h", "tls": {"cert_file": "/c.pem"}}}"#, code: .conflict,
            keyPath: "mqtt.tls.key_file", mentions: "both"),
        Case(
            json: #"{"mqtt": {"base_topic": "a/#"}}"#, code: .invalidValue, keyPath: "mqtt.base_topic",
            mentions: "wildcard"),
        Case(
            json: #"{"bluetooth": {"adapter": "wlan0"}}"#, code: .invalidValue, keyPath: "bluetooth.adapter",
            mentions: "hci0"),
        Case(
            json: #"{"bluetooth": {"bus": "sytem"}}"#, code: .invalidValue, keyPath: "bluetooth.bus",
            mentions: "\"system\""),
        Case(
            json: #"{"bluetooth": {"max_connections": 0}}"#, code: .invalidValue, keyPath: "bluetooth.max_connections",
            mentions: "1 to 64"),
        Case(
            json: #"{"bluetooth": {"max_connections": 65}}"#, code: .invalidValue,
            keyPath: "bluetooth.max_connections", mentions: "1 to 64"),
        Case(
            json: #"{"bluetooth": {"scan": {"mode": "loud"}}}"#, code: .invalidValue, keyPath: "bluetooth.scan.mode",
            mentions: "\"active\" or \"passive\""),
        Case(
            json: #"{"bluetooth": {"scan": {"services": ["heart_rate", "18"]}}}"#, code: .invalidValue,
            keyPath: "bluetooth.scan.services[1]", mentions: "service UUID"),
        Case(
            json: #"{"outbox": {"synchronous": "off"}}"#, code: .invalidValue, keyPath: "outbox.synchronous",
            mentions: "\"normal\" or \"full\""),
        Case(
            json: #"{"outbox": {"max_age": "7x"}}"#, code: .invalidValue, keyPath: "outbox.max_age",
            mentions: "not a duration"),
        Case(
            json: #"{"homeassistant": {"enabled": "yes"}}"#, code: .wrongType, keyPath: "homeassistant.enabled",
            mentions: "true or false"),
        Case(
            json: #"{"commands": {"rate_limit": "fast"}}"#, code: .invalidValue, keyPath: "commands.rate_limit",
            mentions: "\"10/s\""),
        Case(
            json:
                #"{"commands": {"raw_gatt": {"allow": [{"device": "nope", "characteristic": "2a19", "operations": ["read"]}]}}}"#,
            code: .invalidValue, keyPath: "commands.raw_gatt.allow[0].device", mentions: "no device has id"),
        Case(
            json:
                #"{"commands": {"raw_gatt": {"allow": [{"device": "a", "characteristic": "2a19", "service": "18", "operations": ["read"]}]}}}"#,
            code: .invalidValue, keyPath: "commands.raw_gatt.allow[0].service", mentions: "service UUID"),
        Case(json: #"{"devices": {}}"#, code: .wrongType, keyPath: "devices", mentions: "a list"),
        Case(
            json: #"{"devices": [{"match": {"address": "C0:FF:EE:00:00:01"}}]}"#, code: .missingKey,
            keyPath: "devices[0].id", mentions: "required"),
        Case(
            json: #"{"devices": [{"id": "a b", "match": {"name_prefix": "x"}}]}"#, code: .invalidValue,
            keyPath: "devices[0].id", mentions: "letters, digits"),
        Case(
            json: #"{"devices": [{"id": "bridge", "match": {"name_prefix": "x"}}]}"#, code: .invalidValue,
            keyPath: "devices[0].id", mentions: "reserved"),
        Case(
            json: #"{"devices": [{"id": "a", "match": {}}]}"#, code: .missingKey, keyPath: "devices[0].match",
            mentions: "address, name_prefix or service"),
        Case(
            json: #"{"devices": [{"id": "a", "match": {"address": "C0:FF:EE:00:00"}}]}"#, code: .invalidValue,
            keyPath: "devices[0].match.address", mentions: "C0:FF:EE:00:00:01"),
        Case(
            json: #"{"devices": [{\#(device)}, {"id": "d", "match": {"name_prefix": "x"}}]}"#, code: .duplicate,
            keyPath: "devices[1].id", mentions: "devices[0]"),
        Case(
            json: #"{"devices": [{\#(device)}, {"id": "e", "match": {"address": "c0:ff:ee:00:00:01"}}]}"#,
            code: .duplicate, keyPath: "devices[1].match.address", mentions: "already matched"),
        Case(
            json: #"{"devices": [{\#(device), "connection": "always"}]}"#, code: .invalidValue,
            keyPath: "devices[0].connection", mentions: "\"keep_connected\", \"connect_on_demand\" or \"passive\""),
        Case(
            json: #"{"devices": [{\#(device), "subscribe": [{"characteristic": "2a3"}]}]}"#, code: .invalidValue,
            keyPath: "devices[0].subscribe[0].characteristic", mentions: "heart_rate_measurement"),
        Case(
            json: #"{"devices": [{\#(device), "subscribe": [{"characteristic": "battery_level", "mode": "read"}]}]}"#,
            code: .missingKey, keyPath: "devices[0].subscribe[0].interval", mentions: "needs an interval"),
        Case(
            json:
                #"{"devices": [{\#(device), "subscribe": [{"characteristic": "battery_level", "mode": "read", "interval": "10x"}]}]}"#,
            code: .invalidValue, keyPath: "devices[0].subscribe[0].interval", mentions: "not a duration"),
        Case(
            json: #"{"devices": [{\#(device), "subscribe": [{"characteristic": "2a37", "interval": "1m"}]}]}"#,
            code: .conflict, keyPath: "devices[0].subscribe[0].interval", mentions: "mode \"read\""),
        Case(
            json: #"{"devices": [{\#(device), "subscribe": [{"characteristic": "2a37", "intervall": "1m"}]}]}"#,
            code: .unknownKey, keyPath: "devices[0].subscribe[0].intervall", mentions: "did you mean \"interval\""),
        Case(
            json:
                #"{"devices": [{\#(device), "subscribe": [{"characteristic": "2a37"}, {"characteristic": "heart_rate_measurement"}]}]}"#,
            code: .duplicate, keyPath: "devices[0].subscribe[1].characteristic", mentions: "subscribe[0]"),
        Case(
            json: #"{"devices": [{\#(device), "connection": "passive", "subscribe": [{"characteristic": "2a37"}]}]}"#,
            code: .conflict, keyPath: "devices[0].subscribe", mentions: "passive"),
        Case(
            json:
                #"{"devices": [{\#(device), "connection": "connect_on_demand", "subscribe": [{"characteristic": "2a37"}]}]}"#,
            code: .conflict, keyPath: "devices[0].subscribe[0].mode", mentions: "keep_connected"),
        Case(
            json: #"{"devices": [{\#(device), "advertisement": {"decoder": "bthome", "bind_key": "00"}}]}"#,
            code: .invalidValue, keyPath: "devices[0].advertisement.bind_key", mentions: "32 hex digits"),
        Case(
            json:
                #"{"devices": [{\#(device), "commands": [{"name": "x", "characteristic": "2a06", "operations": ["erase"]}]}]}"#,
            code: .invalidValue, keyPath: "devices[0].commands[0].operations[0]",
            mentions: "\"read\", \"write\" or \"notify\""),
        Case(
            json:
                #"{"devices": [{\#(device), "commands": [{"name": "x", "characteristic": "2a06", "format": "uint8", "max": 300}]}]}"#,
            code: .invalidValue, keyPath: "devices[0].commands[0].max", mentions: "0 to 255"),
        Case(
            json:
                #"{"devices": [{\#(device), "commands": [{"name": "x", "characteristic": "2a06", "format": "uint8", "max_length": 3}]}]}"#,
            code: .conflict, keyPath: "devices[0].commands[0].max_length", mentions: "fixed size"),
        Case(
            json:
                #"{"devices": [{\#(device), "commands": [{"name": "x", "characteristic": "2a06", "operations": ["read"], "write_type": "without_response"}]}]}"#,
            code: .conflict, keyPath: "devices[0].commands[0].write_type", mentions: "\"write\""),
        Case(
            json:
                #"{"devices": [{\#(device), "commands": [{"name": "x", "characteristic": "2a06"}, {"name": "x", "characteristic": "2a19"}]}]}"#,
            code: .duplicate, keyPath: "devices[0].commands[1].name", mentions: "unique"),
        Case(json: #"{"devices": [null]}"#, code: .wrongType, keyPath: "devices[0]", mentions: "expected an object"),
        Case(
            json: #"{"bluetooth": {"scan": {"services": [180]}}}"#, code: .wrongType,
            keyPath: "bluetooth.scan.services[0]", mentions: "expected a service UUID"),
        Case(json: "[]", code: .wrongType, keyPath: "(top level)", mentions: "found a list"),
        // Issue 19, D10/D11: U+0000 in a topic made `run` exit 69; mixed separators were accepted.
        Case(
            json: #"{"mqtt": {"base_topic": "a\u0000b"}}"#, code: .invalidValue, keyPath: "mqtt.base_topic",
            mentions: "U+0000"),
        Case(
            json: #"{"homeassistant": {"prefix": "ha\u0000"}}"#, code: .invalidValue, keyPath: "homeassistant.prefix",
            mentions: "U+0000"),
        Case(
            json: #"{"homeassistant": {"status_topic": "x\u0000/status"}}"#, code: .invalidValue,
            keyPath: "homeassistant.status_topic", mentions: "U+0000"),
        Case(
            json: #"{"devices": [{"id": "a", "match": {"address": "C0-FF:EE-00:00-01"}}]}"#, code: .invalidValue,
            keyPath: "devices[0].match.address", mentions: "C0:FF:EE:00:00:01"),
    ]

    /// Issue 19, D11: a number no Swift type holds gave `(top level): expected a different value`.
    @Test(arguments: [
        (#"{"mqtt": {"qos": 99999999999999999999}}"#, "mqtt.qos", 18, "out of range"),
        (#"{"outbox": {"max_bytes": 1e400}}"#, "outbox.max_bytes", 26, "a finite number"),
    ])
    func numbersNoTypeHoldsNameTheirKeyPathAndPlace(
        _ json: String, _ keyPath: String, _ column: Int, _ mentions: String
    )
        throws
    {
        let error = try requireThrows(ConfigurationError.self) {
            try ConfigurationLoader().decode(Data(json.utf8), file: "bad.json")
        }
        #expect(error.code == .invalidValue, "\(error)")
        #expect(error.keyPath == keyPath, "\(error)")
        #expect(error.line == 1 && error.column == column, "\(error)")
        #expect(error.message.contains(mentions), "\(error)")
    }

    /// Issue 19, D11: invalid UTF-8 was refused without saying where.
    @Test func invalidUTF8NamesItsPlace() throws {
        let error = try requireThrows(ConfigurationError.self) {
            try ConfigurationLoader().decode(Data([0x7B, 0x0A, 0x22, 0xC3, 0xA9, 0xFF, 0x22, 0x7D]), file: "bad.json")
        }
        #expect(error.code == .unreadable)
        #expect(error.line == 2 && error.column == 3, "\(error)")
        #expect(error.message.contains("0xff at offset 5"), "\(error)")
        #expect(error.description.hasPrefix("bad.json:2:3: "), "\(error)")
    }

    @Test(arguments: cases + LayoutConfigurationTests.mistakes)
    func rejects(_ example: Case) throws {
        let error = try requireThrows(ConfigurationError.self) {
            try ConfigurationLoader().decode(Data(example.json.utf8), file: "bad.json")
        }
        #expect(error.code == example.code, "\(error)")
        #expect(error.keyPath == example.keyPath, "\(error)")
        #expect(error.message.contains(example.mentions), "\(error)")
        #expect(error.file == "bad.json")
        #expect(error.description.hasPrefix("bad.json: \(example.keyPath): "))
        #expect(!error.description.contains("\n"))
    }

    @Test(arguments: [
        ("{\n  \"mqtt\": {\n    \"qos\": 1,\n  }\n}", 4, 3, "trailing comma"),
        ("{\"a\": tru}", 1, 7, "did you mean true"),
        ("{\n\"a\": 1\n\"b\": 2}", 3, 1, "comma missing"),
        ("{\"a\": 'x'}", 1, 7, "double quotes"),
        ("{\"a\": 1 // note\n}", 1, 9, "expected ',' or '}'"),
        ("{\"a\": \"unterminated\n\"}", 1, 20, "unterminated string"),
        ("{\"a\": 1", 1, 8, "end of input"),
        ("{\"é\": x}", 1, 7, "unexpected 'x'"),
        ("", 1, 1, "empty"),
        ("{} {}", 1, 4, "after the end"),
    ])
    func invalidJSONNamesLineAndColumn(_ text: String, _ line: Int, _ column: Int, _ mentions: String) throws {
        let error = try requireThrows(ConfigurationError.self) {
            try ConfigurationLoader().decode(Data(text.utf8), file: "bad.json")
        }
        #expect(error.code == .invalidJSON, "\(error)")
        #expect(error.line == line, "\(error)")
        #expect(error.column == column, "\(error)")
        #expect(error.message.contains(mentions), "\(error)")
        #expect(error.description.hasPrefix("bad.json:\(line):\(column): "))
    }

    @Test func duplicateKeysAreRejectedWithTheirPlace() throws {
        let error = try requireThrows(ConfigurationError.self) {
            try ConfigurationLoader().decode(Data("{\"mqtt\": {\"qos\": 1,\n \"qos\": 2}}".utf8), file: "bad.json")
        }
        #expect(error.code == .duplicate)
        #expect(error.keyPath == "mqtt.qos")
        #expect(error.line == 2)
        #expect(error.column == 2)
    }

    @Test func missingAndUnreadableFilesAreReportedWithoutDecoding() throws {
        let missing = try requireThrows(ConfigurationError.self) {
            try ConfigurationLoader().load(path: "/nonexistent/blebridge/config.json")
        }
        #expect(missing.code == .fileNotFound)
        #expect(missing.description.hasPrefix("/nonexistent/blebridge/config.json: "))
        let directory = try requireThrows(ConfigurationError.self) {
            try ConfigurationLoader().load(path: NSTemporaryDirectory())
        }
        #expect(directory.code == .unreadable)
        let binary = try requireThrows(ConfigurationError.self) {
            try ConfigurationLoader().decode(Data([0x7B, 0xFF, 0xFE, 0x7D]), file: "b.json")
        }
        #expect(binary.code == .unreadable)
    }
}
