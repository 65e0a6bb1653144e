/// A received signal.
public struct DBusSignal: Sendable, Hashable {
    /// The sender's unique name (`:1.42`).
    public var sender: String
    public var path: DBusObjectPath
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]
    /// Its number among the signals the connection delivered (1, 2, …; 0 when not received):
    /// a method call's ``DBusMethodCall/signalsBefore`` is the number of the last signal its
    /// sender sent before it.
    public var sequence: UInt64

    public init(
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
