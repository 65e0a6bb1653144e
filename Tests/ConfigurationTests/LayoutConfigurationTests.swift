import Bluetooth
import ByteLayouts
import Configuration
import Foundation
import Testing

/// User-defined layouts inside `config.json`: on subscriptions, advertisements and commands, with
/// every mistake reported at its full key path when the file is loaded.
@Suite struct LayoutConfigurationTests {
    static let device = #""id": "lamp", "match": {"address": "C0:FF:EE:00:00:01"}"#
    static let layout = #"""
        {"name": "lamp_status", "fields": [
          {"name": "power", "type": "uint8"},
          {"name": "temperature", "type": "int16_le", "scale": 0.01, "unit": "°C", "device_class": "temperature"},
          {"type": "bits", "length": 1, "bits": [{"name": "on", "shift": 0}, {"name": "mode", "shift": 1, "width": 3}]}]}
        """#

    static func load(_ json: String) throws -> BridgeConfiguration {
        try ConfigurationLoader().decode(Data(json.utf8), file: "config.json")
    }

    @Test func aSubscriptionCarriesItsLayout() throws {
        let configuration = try Self.load(
            #"{"devices": [{\#(Self.device), "subscribe": [{"characteristic": "ff01", "layout": \#(Self.layout)}]}]}"#)
        let layout = try #require(configuration.devices.first?.subscribe.first?.layout)
        #expect(layout.name == "lamp_status")
        #expect(layout.fields.map(\.type) == [.uint8, .int16LE, .bits])
        #expect(layout.fields[1].scale == 0.01)
        #expect(configuration.devices.first?.subscribe.first?.decoder == nil)
        #expect(
            configuration.summaryLines.contains {
                $0.contains("layout lamp_status (power, temperature °C, on, mode)")
            }, "check-config shows the layout")
    }

    @Test func anAdvertisementLayoutNamesTheEntryItReads() throws {
        let byCompany = try Self.load(
            #"{"devices": [{\#(Self.device), "advertisement": {"layout": \#(Self.layout), "manufacturer_id": 1177}}]}"#)
        let settings = try #require(byCompany.devices.first?.advertisement)
        #expect(settings.layoutSource == .manufacturerData(0x0499))
        #expect(settings.decoder == nil)
        #expect(byCompany.summaryLines.contains { $0.contains("on manufacturer data 0x0499") })

        let byService = try Self.load(
            #"{"devices": [{\#(Self.device), "advertisement": {"layout": \#(Self.layout), "service_data": "fff0"}}]}"#)
        #expect(byService.devices.first?.advertisement?.layoutSource == .serviceData(BluetoothUUID("fff0")!))
    }

    @Test func anyCompanyIDAndPackedBitPartsAreAccepted() throws {
        let packed =
            #"{"fields": [{"type": "bits", "length": 3, "big_endian": true, "bits": [{"name": "temperature", "shift": 0, "width": 23, "divisor": 1000, "sign_bit": 23, "scale": 0.1, "unit": "°C", "device_class": "temperature"}, {"name": "humidity", "shift": 0, "width": 23, "modulus": 1000, "scale": 0.1, "unit": "%", "device_class": "humidity"}]}]}"#
        let configuration = try Self.load(
            #"{"devices": [{\#(Self.device), "advertisement": {"layout": \#(packed), "manufacturer_id": "any"}}]}"#)
        let settings = try #require(configuration.devices.first?.advertisement)
        #expect(settings.layoutSource == .anyManufacturerData)
        #expect(settings.layout?.fields.first?.bits?.first?.signBit == 23)
        #expect(settings.layout?.fields.first?.bits?.last?.modulus == 1000)
        #expect(configuration.summaryLines.contains { $0.contains("on manufacturer data of any company id") })
        #expect(throws: ConfigurationError.self) {
            try Self.load(
                #"{"devices": [{\#(Self.device), "advertisement": {"layout": \#(packed), "manufacturer_id": "all"}}]}"#)
        }
        // The sign bit inside the part it signs is refused with its path.
        let inside = packed.replacingOccurrences(of: #""sign_bit": 23"#, with: #""sign_bit": 22"#)
        do {
            _ = try Self.load(
                #"{"devices": [{\#(Self.device), "advertisement": {"layout": \#(inside), "manufacturer_id": 60552}}]}"#)
            Issue.record("a sign bit inside its part was accepted")
        } catch let error as ConfigurationError {
            #expect(error.keyPath == "devices[0].advertisement.layout.fields[0].bits[0].sign_bit")
        }
    }

    @Test func aCommandWithALayoutHasTheLayoutFormat() throws {
        let configuration = try Self.load(
            #"{"devices": [{\#(Self.device), "commands": [{"name": "lamp", "characteristic": "ff02", "operations": ["read", "write"], "layout": \#(Self.layout)}]}]}"#
        )
        let command = try #require(configuration.devices.first?.commands.first)
        #expect(command.format == .layout)
        #expect(command.layout?.name == "lamp_status")
        let unnamed = try Self.load(
            #"{"devices": [{\#(Self.device), "commands": [{"name": "dim", "characteristic": "ff02", "layout": {"fields": [{"name": "level", "type": "uint8"}]}}]}]}"#
        )
        #expect(unnamed.summaryLines.contains { $0.hasSuffix("commands: dim [write] layout (level)") })
    }

    typealias Case = ConfigurationErrorTests.Case

    static func subscription(_ layout: String) -> String {
        #"{"devices": [{"id": "a", "match": {"name_prefix": "A"}}, {\#(device), "subscribe": [{"characteristic": "ff01", "layout": \#(layout)}]}]}"#
    }

    /// Run by ``ConfigurationErrorTests/rejects(_:)`` with the other mistakes.
    static let mistakes: [Case] = [
        Case(
            json: subscription(
                #"{"fields": [{"name": "a", "type": "uint8"}, {"name": "b", "type": "uint8"}, {"name": "c", "type": "uint12"}]}"#
            ), code: .invalidValue, keyPath: "devices[1].subscribe[0].layout.fields[2].type",
            mentions: "unknown type \"uint12\"; accepted: uint8, int8"),
        Case(
            json: subscription(#"{"fields": [{"name": "a", "type": "uint8", "scael": 2}]}"#), code: .unknownKey,
            keyPath: "devices[1].subscribe[0].layout.fields[0].scael",
            mentions: #"unknown key "scael" (did you mean "scale"?)"#),
        Case(
            json: subscription(#"{"fields": [{"name": "a", "type": "bytes"}, {"name": "b", "type": "uint8"}]}"#),
            code: .invalidValue, keyPath: "devices[1].subscribe[0].layout.fields[0].length",
            mentions: "only the last field may omit its length"),
        Case(
            json: subscription(#"{"fields": [{"name": "a", "type": "uint8"}, {"name": "a", "type": "uint8"}]}"#),
            code: .invalidValue, keyPath: "devices[1].subscribe[0].layout.fields[1]", mentions: "duplicate name 'a'"),
        // Device classes, units and state classes Home Assistant refuses (its tables, pinned).
        Case(
            json: subscription(#"{"fields": [{"name": "t", "type": "int16_le", "device_class": "temp"}]}"#),
            code: .invalidValue, keyPath: "devices[1].subscribe[0].layout.fields[0].device_class",
            mentions: "unknown sensor device class 'temp' (did you mean 'temperature'?)"),
        Case(
            json: subscription(
                #"{"fields": [{"name": "t", "type": "int16_le", "unit": "%", "device_class": "temperature"}]}"#),
            code: .invalidValue, keyPath: "devices[1].subscribe[0].layout.fields[0].unit",
            mentions: "device class 'temperature' takes one of 'K', '°C', '°F', not '%' (Home Assistant 20"),
        Case(
            json: subscription(
                #"{"fields": [{"type": "bits", "length": 1, "bits": [{"name": "door", "shift": 0, "device_class": "doors"}]}]}"#
            ), code: .invalidValue, keyPath: "devices[1].subscribe[0].layout.fields[0].bits[0].device_class",
            mentions: "unknown binary sensor device class 'doors'"),
        // present_if: an earlier integer field, exactly one of mask and equals, no unknown keys.
        Case(
            json: subscription(
                #"{"fields": [{"name": "a", "type": "uint8", "present_if": {"field": "b", "mask": 1}}, {"name": "b", "type": "uint8"}]}"#
            ), code: .invalidValue, keyPath: "devices[1].subscribe[0].layout.fields[0].present_if.field",
            mentions: "'b' is not an earlier field of an integer type"),
        Case(
            json: subscription(
                #"{"fields": [{"name": "f", "type": "uint8"}, {"name": "a", "type": "uint8", "present_if": {"field": "f", "mask": 1, "equals": 1}}]}"#
            ), code: .invalidValue, keyPath: "devices[1].subscribe[0].layout.fields[1].present_if",
            mentions: "needs exactly one of 'mask' and 'equals'"),
        Case(
            json: subscription(
                #"{"fields": [{"name": "f", "type": "uint8"}, {"name": "a", "type": "uint8", "present_if": {"field": "f", "mask": 0}}]}"#
            ), code: .invalidValue, keyPath: "devices[1].subscribe[0].layout.fields[1].present_if.mask",
            mentions: "must be at least 1"),
        Case(
            json: subscription(
                #"{"fields": [{"name": "f", "type": "uint8"}, {"name": "a", "type": "uint8", "present_if": {"field": "f", "bit": 1}}]}"#
            ), code: .unknownKey, keyPath: "devices[1].subscribe[0].layout.fields[1].present_if.bit",
            mentions: #"unknown key "bit"; accepted keys here: field, mask, equals"#),
        Case(
            json: subscription(
                #"{"fields": [{"name": "f", "type": "uint8"}, {"name": "a", "type": "uint8", "present_if": {"field": "f", "equals": 0}}, {"name": "a", "type": "uint16_le", "present_if": {"field": "f", "mask": 1}}]}"#
            ), code: .invalidValue, keyPath: "devices[1].subscribe[0].layout.fields[2]",
            mentions: "duplicate name 'a' (a name may repeat only on fields with present_if"),
        Case(
            json: subscription(#"{"fields": [{"name": "a"}]}"#), code: .missingKey,
            keyPath: "devices[1].subscribe[0].layout.fields[0].type", mentions: "required key is missing"),
        Case(
            json: subscription(#""uint8""#), code: .wrongType, keyPath: "devices[1].subscribe[0].layout",
            mentions: "a layout value"),
        Case(
            json:
                #"{"devices": [{\#(device), "subscribe": [{"characteristic": "ff01", "decoder": "raw", "layout": {"fields": [{"name": "a", "type": "uint8"}]}}]}]}"#,
            code: .conflict, keyPath: "devices[0].subscribe[0].layout", mentions: "not both"),
        Case(
            json:
                #"{"devices": [{\#(device), "advertisement": {"layout": {"fields": [{"name": "a", "type": "uint8"}]}}}]}"#,
            code: .missingKey, keyPath: "devices[0].advertisement.layout", mentions: "manufacturer_id"),
        Case(
            json: #"{"devices": [{\#(device), "advertisement": {"decoder": "bthome", "manufacturer_id": 1177}}]}"#,
            code: .conflict, keyPath: "devices[0].advertisement.manufacturer_id", mentions: "applies to a \"layout\""),
        Case(
            json:
                #"{"devices": [{\#(device), "commands": [{"name": "x", "characteristic": "ff02", "format": "uint8", "layout": {"fields": [{"name": "a", "type": "uint8"}]}}]}]}"#,
            code: .conflict, keyPath: "devices[0].commands[0].format", mentions: "format \"layout\""),
        Case(
            json:
                #"{"devices": [{\#(device), "commands": [{"name": "x", "characteristic": "ff02", "format": "layout"}]}]}"#,
            code: .missingKey, keyPath: "devices[0].commands[0].layout", mentions: "needs a \"layout\""),
        Case(
            json:
                #"{"devices": [{\#(device), "commands": [{"name": "x", "characteristic": "ff02", "max_length": 4, "layout": {"fields": [{"name": "a", "type": "uint8"}]}}]}]}"#,
            code: .conflict, keyPath: "devices[0].commands[0].max_length", mentions: "sets its own size"),
    ]
}
