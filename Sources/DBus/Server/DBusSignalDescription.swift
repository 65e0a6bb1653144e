/// A signal an interface emits, for introspection data.
package struct DBusSignalDescription: Sendable, Hashable {
    package var name: String
    package var signature: DBusSignature

    package init(name: String, signature: DBusSignature = .empty) {
        self.name = name
        self.signature = signature
    }
}
