import Foundation
import JSON

/// The scenarios shipped inside the binary (`blebridge simulate --scenario demo`).
package enum BuiltInScenarios {
    /// Names in alphabetical order: bthome, commands, demo, discovery, faults, heart-rate, hygrometers, ibeacon, lamp,
    /// load, mopeka, oralb, pairing, qingping, scales, sensorpush, switchbot, thermometer, victron.
    package static var names: [String] { files.keys.sorted() }

    /// The JSON text of a built-in scenario.
    package static func json(named name: String) -> String? { files[name] }
}

extension Scenario {
    /// Loads a built-in scenario by name, or a scenario file by path.
    package static func load(_ nameOrPath: String) throws(ScenarioError) -> Scenario {
        if let json = BuiltInScenarios.json(named: nameOrPath) {
            return try decode(Data(json.utf8), source: "built-in:\(nameOrPath)")
        }
        guard nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") else {
            throw ScenarioError(
                .unknownScenario, source: nameOrPath,
                message:
                    "no built-in scenario of that name; built-in: \(BuiltInScenarios.names.joined(separator: ", ")), or give a path to a .json file"
            )
        }
        guard FileManager.default.fileExists(atPath: nameOrPath) else {
            throw ScenarioError(.fileNotFound, source: nameOrPath, message: "file not found")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: nameOrPath))
        } catch {
            throw ScenarioError(
                .unreadableFile, source: nameOrPath, message: "cannot read the file (\(error.localizedDescription))")
        }
        return try decode(data, source: nameOrPath)
    }

    /// Decodes scenario JSON, turning decoding failures into errors with the JSON key path.
    public static func decode(_ data: Data, source: String = "") throws(ScenarioError) -> Scenario {
        let bytes = [UInt8](data)
        do {
            // The project's strict parser first: it says where the syntax breaks, and refuses
            // duplicate keys and integers no Swift integer holds, which JSONDecoder would let
            // pass or could not place.
            _ = try JSONParser.files.parse(bytes)
        } catch {
            let (line, column) = error.location(in: bytes)
            let code: ScenarioError.Code =
                switch error.kind {
                case .syntax, .tooDeep: .invalidJSON
                case .duplicateKey: .duplicateKey
                case .numberOutOfRange: .invalidValue
                }
            throw ScenarioError(
                code, source: source, keyPath: JSONKey.path(error.path),
                message: (code == .invalidJSON ? "invalid JSON: " : "")
                    + "\(error.reason) at line \(line), column \(column)")
        }
        do {
            return try JSONDecoder().decode(Scenario.self, from: data)
        } catch let error as DecodingError {
            throw ScenarioError(decoding: error, source: source)
        } catch {
            throw ScenarioError(.invalidJSON, source: source, message: "\(error)")
        }
    }
}

extension ScenarioError {
    init(decoding error: DecodingError, source: String) {
        switch error {
        case .keyNotFound(let key, let context):
            self.init(
                .missingKey, source: source, keyPath: JSONKey.path(context.codingPath + [key]),
                message: "missing required key \"\(key.stringValue)\"")
        case .typeMismatch(let type, let context):
            self.init(
                .typeMismatch, source: source, keyPath: JSONKey.path(context.codingPath),
                message: "wrong type; expected \(Self.jsonTypeName(type))")
        case .valueNotFound(let type, let context):
            self.init(
                .typeMismatch, source: source, keyPath: JSONKey.path(context.codingPath),
                message: "null where \(Self.jsonTypeName(type)) is expected")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let underlying = context.underlyingError.map { "\($0)" } ?? context.debugDescription
                self.init(.invalidJSON, source: source, message: "invalid JSON: \(underlying)")
            } else {
                let unknown = context.underlyingError is JSONUnknownKey
                self.init(
                    unknown ? .unknownKey : .invalidValue, source: source, keyPath: JSONKey.path(context.codingPath),
                    message: context.debugDescription)
            }
        @unknown default:
            self.init(.invalidJSON, source: source, message: "\(error)")
        }
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Double.Type, is Float.Type: "a number"
        case is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type, is UInt8.Type, is UInt16.Type,
            is UInt32.Type, is UInt64.Type:
            "an integer in range"
        default:
            String(describing: type).hasPrefix("Array") ? "a list" : "an object"
        }
    }
}
