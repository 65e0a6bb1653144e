import JSON

/// The configuration's coding key: the JSON module's, for any object key or list index.
typealias ConfigurationKey = JSONKey

extension JSONKey {
    /// `devices[2].subscribe[0].interval`; `(top level)` for the empty path.
    static func render(_ keys: [any CodingKey]) -> String {
        let text = path(keys)
        return text.isEmpty ? "(top level)" : text
    }
}
