/// One incoming method call, as a handler sees it.
public struct DBusMethodCall: Sendable {
    /// The caller's unique name.
    public var sender: String
    public var path: DBusObjectPath
    public var interface: String?
    public var member: String
    public var arguments: [DBusValue]
    /// Signalled once this call's reply has been queued on the connection.
    public var replyNotice: DBusReplyNotice
    /// The ``DBusSignal/sequence`` of the last signal the caller sent before this call (0: none).
    /// Another task consumes those signals (a subscriber's stream): a handler that must see their
    /// effects (bluetoothd's `DeviceFound` after the device's `PropertiesChanged`) waits until its
    /// consumer has handled this one.
    public var signalsBefore: UInt64

    public init(
        sender: String, path: DBusObjectPath, interface: String?, member: String, arguments: [DBusValue],
        replyNotice: DBusReplyNotice = DBusReplyNotice(), signalsBefore: UInt64 = 0
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.replyNotice = replyNotice
        self.signalsBefore = signalsBefore
    }
}
