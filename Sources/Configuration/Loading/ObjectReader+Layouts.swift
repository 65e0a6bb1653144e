import ByteLayouts
import Foundation
import JSON

extension ObjectReader {
    /// A user-defined byte layout at `key` (nil when absent): decoded with the layout's own strict
    /// keys, then validated, every error carrying the full key path
    /// (`devices[1].subscribe[0].layout.fields[2].type`).
    func layout(_ key: String) throws -> ByteLayout? {
        let layout: ByteLayout?
        do {
            layout = try container.decodeIfPresent(ByteLayout.self, forKey: ConfigurationKey(key))
        } catch let error as DecodingError {
            throw Self.translateLayout(error)
        }
        guard let layout else { return nil }
        do {
            try layout.validate()
        } catch {
            throw ConfigurationError(
                code: .invalidValue, keyPath: keyPath(key) + "." + error.path, message: error.message)
        }
        return layout
    }

    /// The layout's own messages (unknown key, unknown type) are kept; type mismatches say what
    /// a layout accepts.
    private static func translateLayout(_ error: DecodingError) -> ConfigurationError {
        switch error {
        case .dataCorrupted(let context):
            let unknownKey = context.underlyingError is JSONUnknownKey
            return ConfigurationError(
                code: unknownKey ? .unknownKey : .invalidValue, keyPath: ConfigurationKey.render(context.codingPath),
                message: context.debugDescription)
        default:
            return translate(error, expected: "a layout value (see docs/configuration.md, \"layout\")")
        }
    }
}
