import DBus

/// BlueZ's object tree as last reported: `GetManagedObjects`, then `InterfacesAdded`/`InterfacesRemoved` and
/// `PropertiesChanged`. Paths are the D-Bus object paths; values the raw D-Bus property values.
struct ManagedObjects: Sendable {
    typealias Properties = [String: DBusValue]
    private(set) var objects: [DBusObjectPath: [String: Properties]] = [:]

    init() {}

    /// Parses a `GetManagedObjects` reply (`a{oa{sa{sv}}}`).
    init(reply: DBusValue) {
        for (path, value) in reply.asObjectPathDictionary ?? [:] {
            objects[path] = Self.interfaces(value)
        }
    }

    /// `a{sa{sv}}` as interface → properties.
    static func interfaces(_ value: DBusValue) -> [String: Properties] {
        var result: [String: Properties] = [:]
        for (interface, properties) in value.asDictionary ?? [:] {
            result[interface] = properties.asDictionary ?? [:]
        }
        return result
    }

    subscript(path: DBusObjectPath) -> [String: Properties]? { objects[path] }

    func properties(_ path: DBusObjectPath, _ interface: String) -> Properties? { objects[path]?[interface] }

    mutating func add(_ path: DBusObjectPath, _ interfaces: [String: Properties]) {
        objects[path, default: [:]].merge(interfaces) { _, new in new }
    }

    mutating func remove(_ path: DBusObjectPath, _ interfaces: [String]) {
        guard var existing = objects[path] else { return }
        for interface in interfaces { existing[interface] = nil }
        objects[path] = existing.isEmpty ? nil : existing
    }

    /// Applies `PropertiesChanged`; returns false when the object or interface is unknown.
    @discardableResult
    mutating func change(_ path: DBusObjectPath, _ interface: String, _ changed: Properties, invalidated: [String])
        -> Bool
    {
        guard objects[path]?[interface] != nil else { return false }
        objects[path]?[interface]?.merge(changed) { _, new in new }
        for name in invalidated { objects[path]?[interface]?[name] = nil }
        return true
    }

    mutating func removeAll() { objects.removeAll() }

    /// Every object strictly below `path`.
    func descendants(of path: DBusObjectPath) -> [DBusObjectPath: [String: Properties]] {
        let prefix = path.rawValue + "/"
        return objects.filter { $0.key.rawValue.hasPrefix(prefix) }
    }

    /// Paths of objects with `interface`.
    func paths(with interface: String) -> [DBusObjectPath] {
        objects.compactMap { $0.value[interface] == nil ? nil : $0.key }
    }
}
