/// An exported method: its signatures and the async handler that serves it.
///
/// Each incoming call runs its handler in a task of its own, so a slow handler never delays
/// other calls. Arguments are checked against `inSignature` before the handler runs
/// (`InvalidArgs` otherwise, or `UnknownMethod` on objects exported with
/// `signatureMismatch: .unknownMethod`); the returned values must match `outSignature`. Throw a
/// `DBusError` to reply with that error name (`org.bluez.Error.InProgress`); any other error
/// becomes `org.freedesktop.DBus.Error.Failed`.
package struct DBusMethod: Sendable {
    package typealias Handler = @Sendable (DBusMethodCall) async throws -> [DBusValue]

    package var name: String
    package var inSignature: DBusSignature
    package var outSignature: DBusSignature
    package var handler: Handler

    package init(
        name: String, inSignature: DBusSignature = .empty, outSignature: DBusSignature = .empty,
        handler: @escaping Handler
    ) {
        self.name = name
        self.inSignature = inSignature
        self.outSignature = outSignature
        self.handler = handler
    }
}
