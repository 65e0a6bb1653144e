import Bluetooth

/// `bluetooth.scan`: the one discovery session the gateway shares.
package struct ScanSettings: Sendable, Equatable {
    package enum Mode: String, ConfigurationEnum {
        /// Scan requests: names and scan-response data arrive sooner, at some radio cost.
        case active
        /// Listen only.
        case passive
    }

    package var mode: Mode
    /// Only report advertisers of these services (empty: everything).
    package var services: [BluetoothUUID]
    /// Report every advertisement, not only changes (needed for passive sensors such as BTHome).
    package var duplicates: Bool
    /// Ignore advertisements weaker than this, in dBm (nil: no floor).
    package var rssiMin: Int?
    /// Forget a device not heard from for this long.
    package var deviceTTL: Duration

    package init(
        mode: Mode = .active, services: [BluetoothUUID] = [], duplicates: Bool = true, rssiMin: Int? = nil,
        deviceTTL: Duration = .seconds(300)
    ) {
        self.mode = mode
        self.services = services
        self.duplicates = duplicates
        self.rssiMin = rssiMin
        self.deviceTTL = deviceTTL
    }

    static let keys = ["mode", "services", "duplicates", "rssi_min", "device_ttl"]
}

extension ScanSettings: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let defaults = ScanSettings()
        mode = try reader.enumeration(Mode.self, "mode") ?? defaults.mode
        services = try reader.uuids("services", kind: .service) ?? defaults.services
        duplicates = try reader.bool("duplicates") ?? defaults.duplicates
        rssiMin = try reader.integer("rssi_min", in: -127...20)
        deviceTTL = try reader.duration("device_ttl", minimum: .seconds(1)) ?? defaults.deviceTTL
    }
}
