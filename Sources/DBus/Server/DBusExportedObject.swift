/// An object to export: a path, its interfaces, and how it answers a wrong argument signature.
package struct DBusExportedObject: Sendable {
    package var path: DBusObjectPath
    package var interfaces: [DBusInterface]
    package var signatureMismatch: DBusSignatureMismatch

    package init(
        path: DBusObjectPath, interfaces: [DBusInterface], signatureMismatch: DBusSignatureMismatch = .invalidArgs
    ) {
        self.path = path
        self.interfaces = interfaces
        self.signatureMismatch = signatureMismatch
    }
}
