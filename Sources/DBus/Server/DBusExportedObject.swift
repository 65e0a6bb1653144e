/// An object to export: a path and its interfaces.
public struct DBusExportedObject: Sendable {
    public var path: DBusObjectPath
    public var interfaces: [DBusInterface]

    public init(path: DBusObjectPath, interfaces: [DBusInterface]) {
        self.path = path
        self.interfaces = interfaces
    }
}
