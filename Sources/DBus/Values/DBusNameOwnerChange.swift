/// A bus name changed owner (`NameOwnerChanged`): appeared (`oldOwner == nil`), vanished
/// (`newOwner == nil`) or moved.
public struct DBusNameOwnerChange: Sendable, Hashable {
    public var name: String
    public var oldOwner: String?
    public var newOwner: String?

    public init(name: String, oldOwner: String?, newOwner: String?) {
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }
}
