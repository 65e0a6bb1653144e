import ByteLayouts
import Configuration
import Foundation
import Gateway
import JSON
import Testing

/// Commands with a user-defined layout: a write's JSON object is encoded by the layout (its
/// inverse), a read is decoded by it, and the configuration's layout reaches the command policy.
@Suite struct ValueFormatLayoutTests {
    static let layout = ByteLayout(
        name: "lamp_mode",
        fields: [
            .init(name: "mode", type: .uint8),
            .init(name: "level", type: .uint16LE, scale: 0.1),
            .init(
                name: nil, type: .bits, length: 1, bits: [.init(name: "on", shift: 0), .init(name: "dim", shift: 1)]),
        ])
    static let format = ValueFormat(.layout, layout: layout)

    @Test func aWriteIsEncodedByTheLayout() throws {
        let value: JSONValue = .object([
            JSONMember("mode", 2), JSONMember("level", 50), JSONMember("on", true), JSONMember("dim", false),
        ])
        #expect(try Self.format.encode(value).get() == [0x02, 0xF4, 0x01, 0x01])
    }

    @Test func aReadIsDecodedByTheLayout() {
        #expect(
            Self.format.decode([0x02, 0xF4, 0x01, 0x03])?.serialized == #"{"mode":2,"level":50,"on":true,"dim":true}"#)
        #expect(Self.format.decode([0x02]) == nil, "too short for the layout")
    }

    @Test func badValuesAreRefusedNamingTheField() throws {
        let tooBig: JSONValue = .object([
            JSONMember("mode", 256), JSONMember("level", 1), JSONMember("on", true), JSONMember("dim", false),
        ])
        let failure = try #require(Self.format.encode(tooBig).failure)
        #expect(failure.code == .invalidValue)
        #expect(failure.message.hasPrefix("mode: "), "\(failure.message)")
        let unknown: JSONValue = .object([JSONMember("speed", 1)])
        #expect(Self.format.encode(unknown).failure?.message.hasPrefix("speed: not a field") == true)
        #expect(Self.format.encode(.int(1)).failure?.code == .invalidValue, "a layout needs an object")
        let missing: JSONValue = .object([JSONMember("mode", 1)])
        #expect(Self.format.encode(missing).failure?.message.hasPrefix("level: ") == true)
    }

    @Test func theConfiguredLayoutReachesTheCommandPolicy() throws {
        let json = #"""
            {"devices": [{"id": "lamp", "match": {"name_prefix": "Lamp"}, "commands": [
              {"name": "lamp_mode", "characteristic": "ff02", "layout": {"fields": [{"name": "mode", "type": "uint8"}]}}]}]}
            """#
        let configuration = try ConfigurationLoader().decode(Data(json.utf8), file: "config.json")
        let command = try #require(
            GatewayModel(configuration: configuration).commandPolicy.devices["lamp"]?.command(named: "lamp_mode"))
        #expect(command.format.kind == .layout)
        #expect(try command.format.encode(.object([JSONMember("mode", 7)])).get() == [7])
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
