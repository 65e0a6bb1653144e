/// An object to export: a path, its interfaces, and how it answers a wrong argument signature.
public struct DBusExportedObject: Sendable {
    public var path: DBusObjectPath
    public var interfaces: [DBusInterface]
    public var signatureMismatch: DBusSignatureMismatch

    public init(
        path: DBusObjectPath, interfaces: [DBusInterface], signatureMismatch: DBusSignatureMismatch = .invalidArgs
    ) {
        self.path = path
        self.interfaces = interfaces
        self.signatureMismatch = signatureMismatch
    }
}
