/// An exported property, served through `org.freedesktop.DBus.Properties`.
///
/// `get` returns nil while the property does not exist (it is then left out of `GetAll`,
/// `GetManagedObjects` and `InterfacesAdded`, and `Get` answers `InvalidArgs`, as BlueZ does for
/// e.g. an unknown `RSSI`). A setter does not emit `PropertiesChanged` by itself: call
/// `DBusConnection.emitPropertiesChanged` when the value really changed.
public struct DBusProperty: Sendable {
    public enum Access: String, Sendable {
        case read
        case write
        case readwrite
    }

    public typealias Getter = @Sendable () async throws -> DBusValue?
    public typealias Setter = @Sendable (DBusValue) async throws -> Void

    public var name: String
    public var signature: DBusSignature
    public var access: Access
    public var get: Getter
    public var set: Setter?

    public init(
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
