import Bluetooth
import DBus
import Foundation
import Timekeeping

/// The device cache: devices BlueZ keeps that nobody needs are removed (bleak#500).
extension CentralManager {
    // MARK: Device cache

    /// Removes devices BlueZ caches that nobody needs (bleak#500). Runs every `cacheSweepInterval`.
    public func sweepDeviceCache() async {
        guard tracker.state == .poweredOn else { return }
        var entries: [DeviceCachePolicy.Entry] = []
        let now = options.clock.now
        for path in adapterDevicePaths {
            guard let properties = objects.properties(path, BlueZNames.device),
                let address = DeviceProperties.address(properties)
            else { continue }
            var protected =
                (properties["Connected"]?.asBool ?? false) || (properties["Paired"]?.asBool ?? false)
                || (properties["Trusted"]?.asBool ?? false)
            if !protected, let peripheral = peripherals[path] { protected = await peripheral.isProtected }
            entries.append(
                DeviceCachePolicy.Entry(address: address, lastSeen: lastSeen[path] ?? now, isProtected: protected))
        }
        let policy = DeviceCachePolicy(
            timeToLive: options.deviceTimeToLive, maximumDevices: options.maximumCachedDevices)
        for address in policy.devicesToRemove(entries, now: now) {
            let path = devicePath(address)
            _ = try? await connection.call(
                destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter,
                method: "RemoveDevice", arguments: [.objectPath(path)], timeout: options.callTimeout)
        }
    }

    /// How many peripherals the manager tracks (one per device object BlueZ reported; to watch
    /// them stay bounded among passing addresses and across bluetoothd restarts).
    public var trackedPeripheralCount: Int { peripherals.count }

    /// The paths of the devices BlueZ holds for the adapter.
    var adapterDevicePaths: [DBusObjectPath] { objects.paths(with: BlueZNames.device).filter(isOurDevice) }

    /// The addresses of the devices BlueZ holds for the adapter (tests: which ones a sweep removed).
    package var cachedDeviceAddresses: Set<BluetoothAddress> {
        Set(
            adapterDevicePaths.compactMap {
                objects.properties($0, BlueZNames.device).flatMap(DeviceProperties.address)
            })
    }

    /// How many devices BlueZ currently holds for the adapter (to watch the cache stay bounded).
    public var cachedDeviceCount: Int {
        adapterDevicePaths.count
    }
}
