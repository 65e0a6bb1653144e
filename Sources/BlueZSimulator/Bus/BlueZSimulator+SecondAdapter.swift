import Bluetooth
import DBus

/// The scenario's second adapter (`second_adapter`, e.g. `hci1`): powered and discovering for
/// another program, it hears every device in range that is not connected and exports it under its
/// own path (`/org/bluez/hci1/dev_…`), with the RSSI it heard, as bluetoothd does for each of its
/// controllers. Its objects are read-only (no methods): they are there so clients of the first
/// adapter can be shown to leave them alone.
extension BlueZSimulator {
    var secondAdapterPath: String? { scenario.secondAdapter.map { "/org/bluez/" + $0.id } }

    func exportSecondAdapter(on connection: DBusConnection) async throws {
        guard let second = scenario.secondAdapter, let path = secondAdapterPath else { return }
        let values: [String: DBusValue] = [
            "Address": .string(second.address), "AddressType": .string("public"), "Name": .string(second.name),
            "Alias": .string(second.name), "Class": .uint32(0), "Powered": .boolean(second.powered),
            "Discoverable": .boolean(false), "Pairable": .boolean(false), "Discovering": .boolean(second.powered),
            "Roles": .strings(["central", "peripheral"]),
        ]
        let interface = DBusInterface(
            name: Self.adapterInterface, methods: [],
            properties: Self.adapterProperties.compactMap { row in
                values[row.name].map { value in
                    DBusProperty(name: row.name, signature: row.signature, access: .read, get: { value })
                }
            }, signals: [])
        try await connection.export(path: try DBusObjectPath(path), interfaces: [interface])
        for key in secondAdapterDevices.keys.sorted() { try await exportHeardDevice(key, on: connection) }
    }

    /// One advertising round on the second adapter: new devices are exported, known ones get their RSSI.
    func secondAdapterHeard() async {
        guard let second = scenario.secondAdapter, second.powered, let bluez else { return }
        for key in deviceOrder {
            guard let device = devices[key], device.inRange, device.link == .disconnected else { continue }
            let rssi = Int16(clamping: device.spec.rssi - 6)
            if secondAdapterDevices.updateValue(rssi, forKey: key) == nil {
                try? await exportHeardDevice(key, on: bluez)
            } else if let path = heardDevicePath(key) {
                try? bluez.emitPropertiesChanged(
                    path: path, interface: Self.deviceInterface, changed: ["RSSI": .int16(rssi)])
            }
        }
    }

    func heardDevicePath(_ key: String) -> DBusObjectPath? {
        guard let adapter = secondAdapterPath, let device = devices[key] else { return nil }
        return try? DBusObjectPath(adapter + "/" + device.spec.address.bluezPathComponent)
    }

    private func exportHeardDevice(_ key: String, on connection: DBusConnection) async throws {
        guard let path = heardDevicePath(key), let adapter = secondAdapterPath, let spec = devices[key]?.spec
        else { return }
        var values: [String: DBusValue] = [
            "Address": .string(spec.address.string), "AddressType": .string(spec.address.type.rawValue),
            "Alias": .string(spec.name ?? spec.address.string.replacingOccurrences(of: ":", with: "-")),
            "Paired": .boolean(false), "Bonded": .boolean(false), "Trusted": .boolean(false),
            "Blocked": .boolean(false), "LegacyPairing": .boolean(false), "Connected": .boolean(false),
            "UUIDs": .strings(spec.advertisement.serviceUUIDs.map(\.uuidString).sorted()),
            "Adapter": .objectPath(try DBusObjectPath(adapter)), "ServicesResolved": .boolean(false),
        ]
        if let name = spec.name { values["Name"] = .string(name) }
        let properties = Self.deviceProperties.compactMap { row -> DBusProperty? in
            if row.name == "RSSI" {
                return DBusProperty(
                    name: row.name, signature: row.signature, access: .read,
                    get: { [weak self] in await self?.secondAdapterDevices[key].map { .int16($0) } })
            }
            return values[row.name].map { value in
                DBusProperty(name: row.name, signature: row.signature, access: .read, get: { value })
            }
        }
        try await connection.export(
            path: path,
            interfaces: [DBusInterface(name: Self.deviceInterface, methods: [], properties: properties, signals: [])])
    }
}
