/// An interface exported on an object: its methods, properties and (for introspection) signals.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    public var signals: [DBusSignalDescription]

    public init(
        name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
        signals: [DBusSignalDescription] = []
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    public func method(named name: String) -> DBusMethod? { methods.first { $0.name == name } }
    public func property(named name: String) -> DBusProperty? { properties.first { $0.name == name } }
}

/// An object to export: a path and its interfaces.
public struct DBusExportedObject: Sendable {
    public var path: DBusObjectPath
    public var interfaces: [DBusInterface]

    public init(path: DBusObjectPath, interfaces: [DBusInterface]) {
        self.path = path
        self.interfaces = interfaces
    }
}

/// A signal an interface emits, for introspection data.
public struct DBusSignalDescription: Sendable, Hashable {
    public var name: String
    public var signature: DBusSignature

    public init(name: String, signature: DBusSignature = .empty) {
        self.name = name
        self.signature = signature
    }
}
