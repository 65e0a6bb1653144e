/// `bluetooth`: the adapter, the bus BlueZ is on, the connection pool and scanning.
package struct BluetoothSettings: Sendable, Equatable {
    /// BlueZ adapter name, `hci0` by default.
    package var adapter: String
    package var bus: BusSelection
    /// At most this many concurrent connections (default 5; real controllers stall beyond ~7).
    package var maxConnections: Int
    /// How long one connection attempt may take.
    package var connectTimeout: Duration
    /// How long a device whose GATT database bluetoothd has cached may take from link-up to `ServicesResolved`
    /// before the attempt disconnects and connects once more within `connectTimeout`; nil: no such limit.
    package var cachedResolveTimeout: Duration?
    package var scan: ScanSettings

    package init(
        adapter: String = "hci0", bus: BusSelection = .system, maxConnections: Int = 5,
        connectTimeout: Duration = .seconds(30), cachedResolveTimeout: Duration? = .seconds(5),
        scan: ScanSettings = ScanSettings()
    ) {
        self.adapter = adapter
        self.bus = bus
        self.maxConnections = maxConnections
        self.connectTimeout = connectTimeout
        self.cachedResolveTimeout = cachedResolveTimeout
        self.scan = scan
    }

    static let keys = ["adapter", "bus", "max_connections", "connect_timeout", "cached_resolve_timeout", "scan"]
}

extension BluetoothSettings: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let defaults = BluetoothSettings()
        adapter = try reader.string("adapter", expected: "an adapter name such as \"hci0\"") ?? defaults.adapter
        guard adapter.hasPrefix("hci"), adapter.count > 3, adapter.dropFirst(3).allSatisfy(\.isASCII),
            Int(adapter.dropFirst(3)) != nil
        else {
            throw reader.error(
                "adapter", .invalidValue,
                "\"\(adapter)\" is not an adapter name; expected hci0, hci1, … (see `hciconfig` or `bluetoothctl list`)"
            )
        }
        if let text = try reader.string("bus", expected: BusSelection.accepted) {
            guard let bus = BusSelection(text: text) else {
                throw reader.error(
                    "bus", .invalidValue, "\"\(text)\" is not accepted; expected \(BusSelection.accepted)")
            }
            self.bus = bus
        } else {
            bus = defaults.bus
        }
        maxConnections = try reader.integer("max_connections", in: 1...64) ?? defaults.maxConnections
        connectTimeout =
            try reader.duration("connect_timeout", minimum: .seconds(1), maximum: .seconds(300))
            ?? defaults.connectTimeout
        if let limit = try reader.duration("cached_resolve_timeout", minimum: .zero, maximum: .seconds(300)) {
            cachedResolveTimeout = limit == .zero ? nil : limit
        } else {
            cachedResolveTimeout = defaults.cachedResolveTimeout
        }
        scan = try reader.object(ScanSettings.self, "scan") ?? defaults.scan
    }
}
