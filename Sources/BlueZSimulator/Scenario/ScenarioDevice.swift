import Bluetooth
import JSON

/// One virtual peripheral: how it advertises, its GATT tree, pairing and faults.
package struct ScenarioDevice: Sendable, Equatable, Decodable {
    /// How the device pairs.
    package enum Pairing: String, Sendable, Equatable, CaseIterable {
        /// No pairing needed; `Pair` still works (Just Works).
        case none
        /// Just Works: pairs without user interaction.
        case justWorks = "just_works"
        /// The device shows a passkey the agent must return from `RequestPasskey`.
        case passkey
        /// The device shows a 6-digit number (its `passkey`) and needs protection against a man in the
        /// middle: an agent that can show and confirm (`DisplayYesNo`, `KeyboardDisplay`) is asked
        /// `RequestConfirmation` with that number; agents without that ability cannot pair it.
        case numericComparison = "numeric_comparison"
    }

    /// A label used in docs and logs (`hr_strap`); defaults to the address.
    package var id: String
    package var address: BluetoothAddress
    package var name: String?
    package var appearance: UInt16?
    package var rssi: Int16
    /// RSSI varies by up to ± this many dBm between advertisements.
    package var rssiJitter: Int16
    package var txPower: Int16?
    package var connectable: Bool
    package var inRange: Bool
    package var advertisement: ScenarioAdvertisement
    package var pairing: Pairing
    package var passkey: UInt32?
    /// The peer refuses every pairing (a sensor not in pairing mode, or one that allows a single
    /// bond): a security raise fails with `Failed` "Operation failed with ATT error: 0x0e", a `Pair`
    /// with `AuthenticationFailed`, each after the timing's `pairing_refusal_delay`, and the link drops.
    package var refusesPairing: Bool
    /// The peer keeps advertising while a central is connected (a peripheral that accepts more than
    /// one link, or BlueZ's example peripheral on a btvirt controller in the VM tier). bluetoothd
    /// reports such advertisements for a connected device too (src/adapter.c skips only devices that
    /// are not connected), so its `RSSI` changes during a link, and during the 2 s a `Disconnect` or
    /// `RemoveDevice` keeps the link up. Most single-link sensors stop advertising: false.
    package var advertisesWhileConnected: Bool
    package var services: [ScenarioService]
    package var faults: ScenarioFaults

    package init(
        id: String? = nil, address: BluetoothAddress, name: String? = nil, appearance: UInt16? = nil, rssi: Int16 = -60,
        rssiJitter: Int16 = 3, txPower: Int16? = nil, connectable: Bool = true, inRange: Bool = true,
        advertisement: ScenarioAdvertisement = ScenarioAdvertisement(), pairing: Pairing = .none,
        passkey: UInt32? = nil, refusesPairing: Bool = false, advertisesWhileConnected: Bool = false,
        services: [ScenarioService] = [],
        faults: ScenarioFaults = ScenarioFaults()
    ) {
        self.id = id ?? address.string
        self.address = address
        self.name = name
        self.appearance = appearance
        self.rssi = rssi
        self.rssiJitter = rssiJitter
        self.txPower = txPower
        self.connectable = connectable
        self.inRange = inRange
        self.advertisement = advertisement
        self.pairing = pairing
        self.passkey = passkey
        self.refusesPairing = refusesPairing
        self.advertisesWhileConnected = advertisesWhileConnected
        self.services = services
        self.faults = faults
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, address, name, appearance, rssi, connectable, advertisement, pairing, passkey, services, faults
        case addressType = "address_type"
        case rssiJitter = "rssi_jitter"
        case txPower = "tx_power"
        case inRange = "in_range"
        case refusesPairing = "refuses_pairing"
        case advertisesWhileConnected = "advertises_while_connected"
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decodeParsedIfPresent(
            String.self, forKey: .addressType, accepted: "\"public\" or \"random\""
        ) { BluetoothAddress.AddressType(rawValue: $0) }
        address = try container.decodeParsed(String.self, forKey: .address, accepted: ScenarioParsing.addressForm) {
            ScenarioParsing.address($0).map { BluetoothAddress(bytes: $0.bytes, type: type ?? .public)! }
        }
        id = try container.decodeIfPresent(String.self, forKey: .id) ?? address.string
        name = try container.decodeIfPresent(String.self, forKey: .name)
        if let name, name.utf8.count > 248 {
            throw container.invalid(.name, "name longer than 248 bytes")
        }
        appearance = try container.decodeIfPresent(UInt16.self, forKey: .appearance)
        rssi = try container.decodeIfPresent(Int16.self, forKey: .rssi) ?? -60
        guard (-127...20).contains(rssi) else {
            throw container.invalid(.rssi, "invalid RSSI \(rssi); expected -127…20 dBm")
        }
        rssiJitter = try container.decodeIfPresent(Int16.self, forKey: .rssiJitter) ?? 3
        guard (0...30).contains(rssiJitter) else { throw container.invalid(.rssiJitter, "expected 0…30 dBm") }
        txPower = try container.decodeIfPresent(Int16.self, forKey: .txPower)
        connectable = try container.decodeIfPresent(Bool.self, forKey: .connectable) ?? true
        inRange = try container.decodeIfPresent(Bool.self, forKey: .inRange) ?? true
        advertisement =
            try container.decodeIfPresent(ScenarioAdvertisement.self, forKey: .advertisement) ?? ScenarioAdvertisement()
        pairing =
            try container.decodeParsedIfPresent(
                String.self, forKey: .pairing, accepted: "one of none, just_works, passkey, numeric_comparison"
            ) { Pairing(rawValue: $0) } ?? .none
        passkey = try container.decodeIfPresent(UInt32.self, forKey: .passkey)
        if let passkey, passkey > 999_999 {
            throw container.invalid(.passkey, "passkey \(passkey) has more than 6 digits")
        }
        if pairing == .passkey || pairing == .numericComparison, passkey == nil {
            throw container.invalid(.passkey, "pairing \"\(pairing.rawValue)\" needs a \"passkey\" (0…999999)")
        }
        refusesPairing = try container.decodeIfPresent(Bool.self, forKey: .refusesPairing) ?? false
        advertisesWhileConnected =
            try container.decodeIfPresent(Bool.self, forKey: .advertisesWhileConnected) ?? false
        services = try container.decodeIfPresent([ScenarioService].self, forKey: .services) ?? []
        faults = try container.decodeIfPresent(ScenarioFaults.self, forKey: .faults) ?? ScenarioFaults()
        if !services.isEmpty, !connectable {
            throw container.invalid(.services, "a device with services must be connectable")
        }
    }
}
