import Bluetooth
import DBus
import Timekeeping

extension PeripheralManager {
    /// The registered advertisement and the task that refreshes it.
    struct AdvertisingState {
        var path: DBusObjectPath
        var advertisement: LocalAdvertisement
        var refresher: Task<Void, Never>?
    }

    /// Advertises through `org.bluez.LEAdvertisingManager1.RegisterAdvertisement`.
    ///
    /// - Parameter refreshEvery: when set, the advertisement is unregistered and registered
    ///   again at this interval whenever no central is connected to this adapter (before the
    ///   first connection and after every disconnect). Real controllers do not need it; BlueZ's
    ///   `btvirt` virtual controllers (5.66) report an advertisement to a scanner only when
    ///   advertising is switched on, so tests on them set about 1 s. Refreshing after a
    ///   disconnect too keeps a reconnect from depending on when the kernel switches
    ///   advertising back on.
    package func startAdvertising(_ advertisement: LocalAdvertisement, refreshEvery: Duration? = nil) async throws {
        await stopAdvertising()
        let path = try applicationPath.appending("advertisement0")
        try await connection.export(path: path, interfaces: [Self.advertisementInterface(advertisement)])
        try await register(path)
        var state = AdvertisingState(path: path, advertisement: advertisement)
        if let refreshEvery {
            state.refresher = Task { [weak self] in await self?.refresh(every: refreshEvery) }
        }
        advertising = state
        logger.info("advertising", [("adapter", adapter), ("name", advertisement.localName ?? "")])
    }

    /// Stops advertising (and refreshing).
    package func stopAdvertising() async {
        guard let state = advertising else { return }
        advertising = nil
        state.refresher?.cancel()
        _ = try? await connection.call(
            destination: "org.bluez", path: adapterPath, interface: "org.bluez.LEAdvertisingManager1",
            method: "UnregisterAdvertisement", arguments: [.objectPath(state.path)])
        try? await connection.unexport(path: state.path)
    }

    func register(_ path: DBusObjectPath) async throws {
        _ = try await connection.call(
            destination: "org.bluez", path: adapterPath, interface: "org.bluez.LEAdvertisingManager1",
            method: "RegisterAdvertisement", arguments: [.objectPath(path), .properties([:])])
    }

    /// Re-registers the advertisement at every interval in which no device under this adapter
    /// is connected.
    func refresh(every interval: Duration) async {
        while !Task.isCancelled {
            // Real delay: the advertisement's refresh period.
            try? await SystemClock().sleep(for: interval)
            guard let state = advertising, !Task.isCancelled else { return }
            if await hasConnectedDevice() { continue }
            _ = try? await connection.call(
                destination: "org.bluez", path: adapterPath, interface: "org.bluez.LEAdvertisingManager1",
                method: "UnregisterAdvertisement", arguments: [.objectPath(state.path)])
            try? await register(state.path)
        }
    }

    func hasConnectedDevice() async -> Bool {
        guard
            let reply = try? await connection.call(
                destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects"),
            let objects = reply.first?.asObjectPathDictionary
        else { return false }
        return objects.contains { path, interfaces in
            path.isDescendant(of: adapterPath, orEqual: false)
                && interfaces.asDictionary?["org.bluez.Device1"]?.asDictionary?["Connected"]?.unwrappedVariant.asBool
                    == true
        }
    }

    static func advertisementInterface(_ advertisement: LocalAdvertisement) -> DBusInterface {
        var properties: [DBusProperty] = [
            constant("Type", .string(advertisement.connectable ? "peripheral" : "broadcast")),
            constant("Discoverable", .boolean(true)),
        ]
        if let name = advertisement.localName { properties.append(constant("LocalName", .string(name))) }
        if !advertisement.serviceUUIDs.isEmpty {
            properties.append(constant("ServiceUUIDs", .strings(advertisement.serviceUUIDs.map(\.uuidString))))
        }
        if !advertisement.manufacturerData.isEmpty {
            let entries = advertisement.manufacturerData.sorted { $0.key < $1.key }.map {
                DBusDictEntry(key: .uint16($0.key), value: .variant(.bytes($0.value)))
            }
            properties.append(
                constant("ManufacturerData", .dictionary(keySignature: "q", valueSignature: "v", entries)))
        }
        if !advertisement.serviceData.isEmpty {
            let entries = advertisement.serviceData.sorted { $0.key < $1.key }.map {
                DBusDictEntry(key: .string($0.key.uuidString), value: .variant(.bytes($0.value)))
            }
            properties.append(constant("ServiceData", .dictionary(keySignature: "s", valueSignature: "v", entries)))
        }
        if advertisement.includeTxPower { properties.append(constant("Includes", .strings(["tx-power"]))) }
        return DBusInterface(
            name: "org.bluez.LEAdvertisement1", methods: [DBusMethod(name: "Release") { _ in [] }],
            properties: properties)
    }
}
