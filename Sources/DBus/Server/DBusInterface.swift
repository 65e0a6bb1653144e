/// An interface exported on an object: its methods, properties and (for introspection) signals.
package struct DBusInterface: Sendable {
    package var name: String
    package var methods: [DBusMethod]
    package var properties: [DBusProperty]
    package var signals: [DBusSignalDescription]

    package init(
        name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
        signals: [DBusSignalDescription] = []
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    package func method(named name: String) -> DBusMethod? { methods.first { $0.name == name } }
    package func property(named name: String) -> DBusProperty? { properties.first { $0.name == name } }
}
