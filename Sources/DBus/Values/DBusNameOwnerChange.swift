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

extension DBusNameOwnerChange {
    /// The change a `NameOwnerChanged` signal (`sss`) reports; nil for another shape.
    init?(signal: DBusSignal) {
        guard signal.arguments.count == 3, let name = signal.arguments[0].asString,
            let old = signal.arguments[1].asString, let new = signal.arguments[2].asString
        else { return nil }
        self.init(name: name, oldOwner: old.isEmpty ? nil : old, newOwner: new.isEmpty ? nil : new)
    }
}
