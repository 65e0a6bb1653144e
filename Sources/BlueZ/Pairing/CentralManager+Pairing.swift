import Bluetooth
import DBus

/// Pairing and bonding. Core Bluetooth pairs implicitly; on BlueZ a central pairs explicitly with
/// `Device1.Pair`, answering bluetoothd's questions through an `org.bluez.Agent1` (``PairingAgent``).
extension CentralManager {
    /// Pairs with (and bonds to) a connected peripheral; returns when BlueZ reports it paired.
    ///
    /// Registers this process's agent first (capability from `policy`: `NoInputNoOutput` for Just Works,
    /// `KeyboardDisplay` with a passkey provider), and, when `Options.requestsDefaultAgent`, makes it the default
    /// agent. Returns at once when the peripheral is already paired (BlueZ's `AlreadyExists` counts as success).
    /// A second `pair` of the same peripheral while one runs joins it. With `policy.trustsPairedDevices`, marks
    /// the device `Trusted` afterwards.
    ///
    /// Throws `notConnected` unless connected (connect first: a `Pair` that connects by itself would bypass
    /// the peripheral's connection lifecycle), `authenticationFailed` (wrong passkey, no passkey for a device that
    /// needs one, agent rejected: `AuthenticationFailed`, `AuthenticationRejected`, `ConnectionAttemptFailed`),
    /// `authenticationCanceled` (`AuthenticationCanceled`, cancelled by the agent), `authenticationTimeout`
    /// (`AuthenticationTimeout`, or no answer within `timeout`: the attempt is then cancelled with
    /// `CancelPairing`), `inProgress` (another process is pairing it), and the state errors.
    public func pair(_ peripheral: Peripheral, policy: PairingPolicy? = nil, timeout: Duration = .seconds(60))
        async throws
    {
        if let error = state.operationError { throw error }
        guard await peripheral.state == .connected else {
            throw BluetoothError(.notConnected, "connect \(peripheral.identifier) before pairing")
        }
        if await peripheral.isPaired { return }
        let policy = policy ?? options.pairing
        try await agent.register(capability: policy.capability, asDefault: options.requestsDefaultAgent)
        let connection = self.connection
        let path = peripheral.path
        try await agent.session(for: path, policy: policy) {
            try await Self.callPair(connection, path, timeout: timeout)
        }
        await refreshDevice(peripheral)
        if policy.trustsPairedDevices, await !peripheral.isTrusted {
            do {
                _ = try await connection.call(
                    destination: BlueZNames.service, path: path, interface: BlueZNames.properties, method: "Set",
                    arguments: [.string(BlueZNames.device), .string("Trusted"), .variant(.boolean(true))],
                    timeout: options.callTimeout)
            } catch {
                throw BluetoothError.from(error, during: .pair)
            }
            await refreshDevice(peripheral)
        }
    }

    /// Pairs with a passkey from `passkeyProvider` (nil: Just Works); the rest of the default policy applies.
    public func pair(
        _ peripheral: Peripheral, passkeyProvider: PairingPolicy.PasskeyProvider?, timeout: Duration = .seconds(60)
    ) async throws {
        var policy = options.pairing
        policy.passkeyProvider = passkeyProvider
        try await pair(peripheral, policy: policy, timeout: timeout)
    }

    /// Registers the agent now with the default policy (it is otherwise registered on the first `pair`), so
    /// that pairings the peripheral starts find it.
    public func registerAgent() async throws {
        try await agent.register(capability: options.pairing.capability, asDefault: options.requestsDefaultAgent)
    }

    /// Called by a peripheral whose operation failed with `insufficientAuthentication` when
    /// `Options.pairOnInsufficientAuthentication` is set.
    ///
    /// bluetoothd answers that error only after its own attempt: its ATT layer raised the link's security,
    /// which pairs through the default agent, and the request failed again. So: when the device is paired by
    /// now (an operation running alongside paired it), the operation is simply retried; when this process's
    /// agent is the default agent, bluetoothd already asked it and the pairing failed, so a second `Pair`
    /// would only ask the same questions again: the error stands, with the fix in its message. Otherwise
    /// (another process's agent, or none, was asked) `Pair` runs with this process's agent.
    func pairForAuthentication(_ peripheral: Peripheral, error: BluetoothError) async throws {
        await refreshDevice(peripheral)
        if await peripheral.isPaired { return }
        if options.requestsDefaultAgent, await agent.isDefault {
            throw BluetoothError(
                .insufficientAuthentication,
                "\(peripheral.identifier) needs pairing and the pairing through this process's agent failed "
                    + "(BlueZ: \(error.bluezError?.message ?? error.description)); check the passkey or "
                    + "confirmation the agent gives",
                bluezError: error.bluezError)
        }
        try await pair(peripheral, policy: nil, timeout: options.pairingTimeout)
    }

    private static func callPair(_ connection: DBusConnection, _ path: DBusObjectPath, timeout: Duration) async throws {
        do {
            _ = try await connection.call(
                destination: BlueZNames.service, path: path, interface: BlueZNames.device, method: "Pair",
                timeout: timeout)
        } catch {
            let mapped = BluetoothError.from(error, during: .pair)
            switch mapped.code {
            case .alreadyExists:
                return  // already bonded
            case .authenticationTimeout, .operationCancelled:
                _ = try? await connection.call(
                    destination: BlueZNames.service, path: path, interface: BlueZNames.device,
                    method: "CancelPairing", timeout: .seconds(5))
            default:
                break
            }
            throw mapped
        }
    }

    /// Reads `Paired`, `Bonded` and `Trusted` now: the reply to `Pair` can overtake their `PropertiesChanged`.
    private func refreshDevice(_ peripheral: Peripheral) async {
        guard
            let reply = try? await connection.call(
                destination: BlueZNames.service, path: peripheral.path, interface: BlueZNames.properties,
                method: "GetAll", arguments: [.string(BlueZNames.device)], timeout: options.callTimeout),
            let properties = reply.first?.asDictionary
        else { return }
        let pairing = properties.filter { ["Paired", "Bonded", "Trusted"].contains($0.key) }
        await peripheral.deviceChanged(pairing, invalidated: [])
    }
}
