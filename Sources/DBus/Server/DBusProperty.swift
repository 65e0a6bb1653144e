/// An exported property, served through `org.freedesktop.DBus.Properties`.
///
/// `get` returns nil while the property does not exist (it is then left out of `GetAll`,
/// `GetManagedObjects` and `InterfacesAdded`, and `Get` answers `InvalidArgs`, as BlueZ does for
/// e.g. an unknown `RSSI`). A setter does not emit `PropertiesChanged` by itself: call
/// `DBusConnection.emitPropertiesChanged` when the value really changed.
package struct DBusProperty: Sendable {
    package enum Access: String, Sendable {
        case read
        case write
        case readwrite
    }

    package typealias Getter = @Sendable () async throws -> DBusValue?
    package typealias Setter = @Sendable (DBusValue) async throws -> Void

    package var name: String
    package var signature: DBusSignature
    package var access: Access
    package var get: Getter
    package var set: Setter?

    package init(
        name: String, signature: DBusSignature, access: Access = .read, get: @escaping Getter,
        set: Setter? = nil
    ) {
        self.name = name
        self.signature = signature
        self.access = set == nil ? .read : access
        self.get = get
        self.set = set
    }

    var isReadable: Bool { access != .write }
    var isWritable: Bool { access != .read && set != nil }
}
