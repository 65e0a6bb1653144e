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

    public init(
        sender: String, path: DBusObjectPath, interface: String?, member: String, arguments: [DBusValue],
        replyNotice: DBusReplyNotice = DBusReplyNotice()
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.replyNotice = replyNotice
    }
}
