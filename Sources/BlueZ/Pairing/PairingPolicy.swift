import Bluetooth

/// How this process answers BlueZ's pairing questions (the `org.bluez.Agent1` it exports).
///
/// Without a passkey provider the agent registers as `NoInputNoOutput`: Just Works only, and devices that
/// demand a passkey fail with `authenticationFailed`. With one it registers as `KeyboardDisplay` and answers
/// `RequestPasskey` with what the provider returns.
///
/// ```swift
/// let justWorks = PairingPolicy()
/// let withPasskey = PairingPolicy(passkeyProvider: { _ in 123456 })   // e.g. printed on the device
/// ```
public struct PairingPolicy: Sendable {
    /// Returns the 6-digit passkey the peripheral displays or has printed on it, or nil to decline (the agent
    /// then answers `org.bluez.Error.Rejected`; a thrown error also rejects, a cancellation answers
    /// `org.bluez.Error.Canceled`).
    public typealias PasskeyProvider = @Sendable (_ peripheral: BluetoothAddress) async throws -> UInt32?

    /// Decides a confirmation: numeric comparison (`passkey` is the number both sides show) or a Just Works /
    /// incoming pairing authorisation (`passkey` nil). True accepts.
    public typealias Confirmation = @Sendable (_ peripheral: BluetoothAddress, _ passkey: UInt32?) async -> Bool

    /// Something the agent must show the user: a passkey to type on the peripheral (with how many digits were
    /// typed so far) or a legacy PIN code.
    public enum Display: Sendable, Hashable {
        case passkey(UInt32, entered: UInt16)
        case pinCode(String)
    }

    public var passkeyProvider: PasskeyProvider?
    /// Default: accept (Just Works pairing needs no user).
    public var confirmation: Confirmation
    /// Receives passkeys and PIN codes to display. Without it, `DisplayPinCode` is rejected (the PIN could not
    /// be shown) and `DisplayPasskey` is only logged by BlueZ's side.
    public var display: (@Sendable (_ peripheral: BluetoothAddress, _ value: Display) -> Void)?
    /// Mark the device `Trusted` after pairing succeeds, so BlueZ lets it reconnect and use services without
    /// asking the agent (`AuthorizeService`).
    public var trustsPairedDevices: Bool
    /// Answer `AuthorizeService` (a bonded but untrusted device using a profile) with yes.
    public var authorizesServices: Bool

    public init(
        passkeyProvider: PasskeyProvider? = nil,
        confirmation: @escaping Confirmation = { _, _ in true },
        display: (@Sendable (_ peripheral: BluetoothAddress, _ value: Display) -> Void)? = nil,
        trustsPairedDevices: Bool = true, authorizesServices: Bool = false
    ) {
        self.passkeyProvider = passkeyProvider
        self.confirmation = confirmation
        self.display = display
        self.trustsPairedDevices = trustsPairedDevices
        self.authorizesServices = authorizesServices
    }

    /// The capability the agent registers with: `KeyboardDisplay` with a passkey provider, else
    /// `NoInputNoOutput`.
    public var capability: AgentCapability { passkeyProvider == nil ? .noInputNoOutput : .keyboardDisplay }
}
