/// An exported method: its signatures and the async handler that serves it.
///
/// Each incoming call runs its handler in a task of its own, so a slow handler never delays
/// other calls. Arguments are checked against `inSignature` before the handler runs
/// (`InvalidArgs` otherwise, or `UnknownMethod` on objects exported with
/// `signatureMismatch: .unknownMethod`); the returned values must match `outSignature`. Throw a
/// `DBusError` to reply with that error name (`org.bluez.Error.InProgress`); any other error
/// becomes `org.freedesktop.DBus.Error.Failed`.
public struct DBusMethod: Sendable {
    public typealias Handler = @Sendable (DBusMethodCall) async throws -> [DBusValue]

    public var name: String
    public var inSignature: DBusSignature
    public var outSignature: DBusSignature
    public var handler: Handler

    public init(
        name: String, inSignature: DBusSignature = .empty, outSignature: DBusSignature = .empty,
        handler: @escaping Handler
    ) {
        self.name = name
        self.inSignature = inSignature
        self.outSignature = outSignature
        self.handler = handler
    }
}
