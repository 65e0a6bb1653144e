/// A signal an interface emits, for introspection data.
public struct DBusSignalDescription: Sendable, Hashable {
    public var name: String
    public var signature: DBusSignature

    public init(name: String, signature: DBusSignature = .empty) {
        self.name = name
        self.signature = signature
    }
}
