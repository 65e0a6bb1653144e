import DBus

/// BlueZ's object tree as last reported: `GetManagedObjects`, then `InterfacesAdded`/`InterfacesRemoved` and
/// `PropertiesChanged`. Paths are the D-Bus object paths; values the raw D-Bus property values.
struct ManagedObjects: Sendable {
    typealias Properties = [String: DBusValue]
    private(set) var objects: [DBusObjectPath: [String: Properties]] = [:]
    /// The paths below each device-level path (`/org/bluez/hci0/dev_…`, four components): its GATT
    /// objects, so a peripheral finds its own without a pass over every object of every device.
    private var belowDevice: [DBusObjectPath: Set<DBusObjectPath>] = [:]

    init() {}

    /// Parses a `GetManagedObjects` reply (`a{oa{sa{sv}}}`).
    init(reply: DBusValue) {
        for (path, value) in reply.asObjectPathDictionary ?? [:] {
            set(path, Self.interfaces(value))
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
        guard objects[path] != nil else { return set(path, interfaces) }
        objects[path]?.merge(interfaces) { _, new in new }
    }

    mutating func remove(_ path: DBusObjectPath, _ interfaces: [String]) {
        guard var existing = objects[path] else { return }
        for interface in interfaces { existing[interface] = nil }
        set(path, existing.isEmpty ? nil : existing)
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

    mutating func removeAll() {
        objects.removeAll()
        belowDevice.removeAll()
    }

    /// Every object strictly below `path`.
    func descendants(of path: DBusObjectPath) -> [DBusObjectPath: [String: Properties]] {
        if Self.deviceLevel(of: path) == path {
            var result: [DBusObjectPath: [String: Properties]] = [:]
            for descendant in belowDevice[path] ?? [] { result[descendant] = objects[descendant] }
            return result
        }
        let prefix = path.rawValue + "/"
        return objects.filter { $0.key.rawValue.hasPrefix(prefix) }
    }

    /// Makes the objects strictly below `path` exactly `tree` (`GetManagedObjects` after services resolved).
    mutating func replaceDescendants(of path: DBusObjectPath, with tree: [DBusObjectPath: [String: Properties]]) {
        for old in descendants(of: path).keys where tree[old] == nil { set(old, nil) }
        for (descendant, interfaces) in tree { set(descendant, interfaces) }
    }

    /// Removes every object strictly below `path`.
    mutating func removeDescendants(of path: DBusObjectPath) {
        for old in descendants(of: path).keys { set(old, nil) }
    }

    /// Sets or removes one object, keeping ``belowDevice`` in step.
    private mutating func set(_ path: DBusObjectPath, _ interfaces: [String: Properties]?) {
        let wasPresent: Bool
        if let interfaces {
            wasPresent = objects.updateValue(interfaces, forKey: path) != nil
        } else {
            wasPresent = objects.removeValue(forKey: path) != nil
        }
        guard wasPresent != (interfaces != nil), let device = Self.deviceLevel(of: path), device != path else { return }
        if interfaces != nil {
            belowDevice[device, default: []].insert(path)
        } else {
            belowDevice[device]?.remove(path)
            if belowDevice[device]?.isEmpty == true { belowDevice[device] = nil }
        }
    }

    /// The device-level ancestor of `path` (its first four elements: `/org/bluez/hci0/dev_…`), or
    /// `path` itself at that level; nil above it.
    static func deviceLevel(of path: DBusObjectPath) -> DBusObjectPath? {
        let raw = path.rawValue
        var slashes = 0
        for index in raw.indices where raw[index] == "/" {
            slashes += 1
            // The part of a valid path before one of its separators is a valid path.
            if slashes == 5 { return DBusObjectPath(validating: String(raw[..<index])) }
        }
        return slashes == 4 ? path : nil
    }

    /// Paths of objects with `interface`.
    func paths(with interface: String) -> [DBusObjectPath] {
        objects.compactMap { $0.value[interface] == nil ? nil : $0.key }
    }
}
