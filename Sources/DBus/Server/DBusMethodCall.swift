/// One incoming method call, as a handler sees it.
package struct DBusMethodCall: Sendable {
    /// The caller's unique name.
    package var sender: String
    package var path: DBusObjectPath
    package var interface: String?
    package var member: String
    package var arguments: [DBusValue]
    /// Signalled once this call's reply has been queued on the connection.
    package var replyNotice: DBusReplyNotice
    /// The ``DBusSignal/sequence`` of the last signal the caller sent before this call (0: none).
    /// Another task consumes those signals (a subscriber's stream): a handler that must see their
    /// effects (bluetoothd's `DeviceFound` after the device's `PropertiesChanged`) waits until its
    /// consumer has handled this one.
    package var signalsBefore: UInt64
    /// The number the caller's connection gave the call as it sent it: calls of one caller are
    /// handled concurrently, so this, not the order handlers run in, is the order they were sent.
    package var serial: UInt32

    package init(
        sender: String, path: DBusObjectPath, interface: String?, member: String, arguments: [DBusValue],
        replyNotice: DBusReplyNotice = DBusReplyNotice(), signalsBefore: UInt64 = 0, serial: UInt32 = 0
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.replyNotice = replyNotice
        self.signalsBefore = signalsBefore
        self.serial = serial
    }
}
