/// A bus name changed owner (`NameOwnerChanged`): appeared (`oldOwner == nil`), vanished
/// (`newOwner == nil`) or moved.
package struct DBusNameOwnerChange: Sendable, Hashable {
    package var name: String
    package var oldOwner: String?
    package var newOwner: String?

    package init(name: String, oldOwner: String?, newOwner: String?) {
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }
}
