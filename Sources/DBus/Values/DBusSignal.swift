/// A received signal.
package struct DBusSignal: Sendable, Hashable {
    /// The sender's unique name (`:1.42`).
    package var sender: String
    package var path: DBusObjectPath
    package var interface: String
    package var member: String
    package var arguments: [DBusValue]
    /// Its number among the signals the connection delivered (1, 2, …; 0 when not received):
    /// a method call's ``DBusMethodCall/signalsBefore`` is the number of the last signal its
    /// sender sent before it.
    package var sequence: UInt64

    package init(
        sender: String, path: DBusObjectPath, interface: String, member: String, arguments: [DBusValue],
        sequence: UInt64 = 0
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.sequence = sequence
    }
}
