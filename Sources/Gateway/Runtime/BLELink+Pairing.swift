import BlueZ
import Bluetooth

/// Pairing that bluetoothd starts by itself: when a device refuses a read, write or subscription for want
/// of security, bluetoothd's ATT layer raises the link's security, which pairs through the *default*
/// agent, and sends the request again (docs/simulator.md). The gateway is that agent when a configured
/// device has a `passkey`.
extension BLELink {
    /// Answers `RequestPasskey` with the configured passkey of the device asking (nil: declined, so
    /// BlueZ's pairing fails and the operation reports `not_paired`), and confirms pairings of configured
    /// devices only (a numeric comparison cannot be shown to anyone on a headless gateway).
    func pairingPolicy() -> PairingPolicy {
        PairingPolicy(
            passkeyProvider: { [weak self] address in await self?.configuredPasskey(for: address) },
            confirmation: { [weak self] address, _ in await self?.configuredDeviceID(for: address) != nil },
            trustsPairedDevices: true)
    }

    /// Registers the agent as BlueZ's default agent when a configured device has a passkey; without one
    /// the gateway leaves pairing to BlueZ (Just Works needs no agent when this side initiates).
    func registerPairingAgent(_ central: CentralManager) async {
        guard configuration.devices.contains(where: { $0.passkey != nil }) else { return }
        do {
            try await central.registerAgent()
            logger.info("pairing agent registered as the default agent (a device has a passkey)", [])
        } catch {
            logger.warning("pairing agent could not be registered; passkey pairing will fail", [("error", "\(error)")])
        }
    }

    func configuredPasskey(for address: BluetoothAddress) -> UInt32? {
        guard let id = configuredDeviceID(for: address) else { return nil }
        let passkey = configuration.device(id: id)?.passkey
        if passkey == nil {
            logger.warning(
                "the device asks for a passkey and none is configured; set its \"passkey\"", [("device", id)])
        }
        return passkey
    }

    /// The configured device `address` belongs to: the one it was matched as, else the one matching it by address.
    func configuredDeviceID(for address: BluetoothAddress) -> String? {
        if let id = peripherals.first(where: { $0.value.identifier == address })?.key { return id }
        return configuration.devices.first { $0.match.address == address }?.id
    }
}

extension BLELink {
    /// What a failure means when it is bluetoothd's answer to a refused pairing: `Failed` "Operation failed
    /// with ATT error: 0x0e" ("Unlikely Error"). bluetoothd 5.66 answered a request with it, about 1 s later,
    /// when the security raise it started for that request failed because the device refused pairing, and
    /// the link dropped with it (measured in the VM tier, docs/testing.md). Nil for every other failure.
    static func refusedPairing(_ error: BluetoothError) -> String? {
        guard error.code == .attributeError, let answer = error.bluezError,
            answer.message.lowercased().hasSuffix("att error: 0x0e")
        else { return nil }
        return "\(error.description); bluetoothd answers ATT error 0x0e when the pairing it started for this "
            + "request failed: the device refused pairing. Put the device in pairing mode (or remove its bond "
            + "with another central), and set its \"passkey\" if it shows one"
    }
}
