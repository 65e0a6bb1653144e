import Bluetooth
import Configuration

/// The configured devices, looked up by id and by the address their match names, built once per
/// configuration. Every advertisement asks which device it is; two passes over the whole device
/// list (each element a copy of a ``DeviceConfiguration``) cost more than the decoding with a
/// hundred automatic devices (docs/benchmarks.md, "Advertisements").
struct DeviceMatchIndex {
    private let devices: [DeviceConfiguration]
    private let byID: [String: Int]
    /// Devices whose match names an address, keyed by its bytes (the type does not take part, as in
    /// ``DeviceMatch/matches(address:name:services:)``), in configuration order.
    private let byAddress: [[UInt8]: [Int]]
    /// Devices whose match names no address, in configuration order.
    private let unaddressed: [Int]

    init(_ devices: [DeviceConfiguration]) {
        self.devices = devices
        var byID: [String: Int] = [:]
        var byAddress: [[UInt8]: [Int]] = [:]
        var unaddressed: [Int] = []
        for (index, device) in devices.enumerated() {
            if byID[device.id] == nil { byID[device.id] = index }
            if let address = device.match.address {
                byAddress[address.bytes, default: []].append(index)
            } else {
                unaddressed.append(index)
            }
        }
        self.byID = byID
        self.byAddress = byAddress
        self.unaddressed = unaddressed
    }

    /// The first device with `id` (``BridgeConfiguration/device(id:)``).
    func device(id: String) -> DeviceConfiguration? {
        byID[id].map { devices[$0] }
    }

    /// The device an advertiser is: the first whose match names this address and holds, else the
    /// first match without an address that holds. `services` are the advertised service UUIDs and
    /// the service-data UUIDs.
    func deviceID(address: BluetoothAddress?, name: String?, services: [BluetoothUUID]) -> String? {
        func matches(_ index: Int) -> Bool {
            devices[index].match.matches(address: address, name: name, services: services)
        }
        let named = address.flatMap { byAddress[$0.bytes] } ?? []
        return (named.first(where: matches) ?? unaddressed.first(where: matches)).map { devices[$0].id }
    }
}
