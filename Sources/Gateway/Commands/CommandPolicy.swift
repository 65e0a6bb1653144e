import Bluetooth
import Configuration
import JSON

/// What commands the configuration allows: per device, named commands and readable
/// characteristics; raw GATT requests only when enabled and allowlisted. Nothing else is
/// writable.
public struct CommandPolicy: Sendable, Hashable {
    package var devices: [String: DeviceCommandPolicy]
    /// `commands.raw_gatt.enabled`; off by default.
    package var rawGATTEnabled: Bool
    /// Larger command payloads are refused with `payload_too_large` before parsing.
    package var maximumPayloadBytes: Int
    /// Commands per second per device (`commands.rate_limit`) unless the device overrides it.
    package var defaultRate: Double

    package init(
        devices: [DeviceCommandPolicy] = [], rawGATTEnabled: Bool = false, maximumPayloadBytes: Int = 16_384,
        defaultRate: Double = 10
    ) {
        self.devices = Dictionary(devices.map { ($0.deviceID, $0) }, uniquingKeysWith: { first, _ in first })
        self.rawGATTEnabled = rawGATTEnabled
        self.maximumPayloadBytes = maximumPayloadBytes
        self.defaultRate = defaultRate
    }
}

/// One device's part of the policy.
package struct DeviceCommandPolicy: Sendable, Hashable {
    package var deviceID: String
    /// Named commands for `<device>/set` (and `get` when they allow `read`).
    package var commands: [NamedCommand]
    /// Extra names `<device>/get` accepts (the subscribed characteristics, by the name the
    /// configuration used and by UUID), each mapped to its characteristic (and service, when
    /// the subscription names one).
    package var readTargets: [String: CharacteristicTarget]
    /// Raw GATT allowlist for this device: characteristic (within a service, when the entry
    /// names one; without one, in any service) → operations.
    package var rawAllow: [CharacteristicTarget: Set<GATTOperation>]
    /// Commands per second for this device; nil = the policy's default.
    package var rate: Double?

    package init(
        deviceID: String, commands: [NamedCommand] = [], readTargets: [String: CharacteristicTarget] = [:],
        rawAllow: [CharacteristicTarget: Set<GATTOperation>] = [:], rate: Double? = nil
    ) {
        self.deviceID = deviceID
        self.commands = commands
        self.readTargets = readTargets
        self.rawAllow = rawAllow
        self.rate = rate
    }

    /// The command named `name`, byte for byte (a field name from a client is compared by its bytes,
    /// ``Swift/String/utf8Equals(_:)``).
    package func command(named name: String) -> NamedCommand? {
        commands.first(where: { $0.name.utf8Equals(name) })
    }

    /// The service a raw GATT `operation` on `characteristic` is executed in, when the allowlist
    /// permits it. A request naming `service` needs an entry for that service or one naming none.
    /// A request naming none uses an entry naming none (the device's first service holding the
    /// characteristic), else the one service the entries name; several: the request must choose.
    package func rawTarget(
        _ characteristic: BluetoothUUID, service: BluetoothUUID?, operation: GATTOperation
    ) -> Result<BluetoothUUID?, CommandFailure> {
        let grants = rawAllow.filter { $0.key.characteristic == characteristic && $0.value.contains(operation) }.keys
        let refused = CommandFailure(
            .notAllowed,
            "\(operation.rawValue) of \(characteristic)\(service.map { " in service \($0)" } ?? "") on \(deviceID)"
                + " is not in the raw_gatt allowlist")
        if let service {
            return grants.contains { $0.service == nil || $0.service == service }
                ? .success(service) : .failure(refused)
        }
        if grants.contains(where: { $0.service == nil }) { return .success(nil) }
        let services = Set(grants.compactMap(\.service)).sorted { $0.description < $1.description }
        switch services.count {
        case 0: return .failure(refused)
        case 1: return .success(services[0])
        default:
            return .failure(
                CommandFailure(
                    .invalidRequest,
                    "'service' is required: \(characteristic) on \(deviceID) is allowlisted in services "
                        + services.map(\.description).joined(separator: ", ")))
        }
    }
}

/// A command the configuration names, e.g. `{"name":"power","characteristic":"6b1e0002-…",
/// "operations":["read","write"],"format":"bool"}`.
package struct NamedCommand: Sendable, Hashable {
    package var name: String
    package var characteristic: BluetoothUUID
    /// The service holding it, when the configuration names one (`devices[].commands[].service`).
    package var service: BluetoothUUID?
    package var operations: Set<GATTOperation>
    package var format: ValueFormat
    package var writeType: WriteType

    package init(
        name: String, characteristic: BluetoothUUID, service: BluetoothUUID? = nil, operations: Set<GATTOperation>,
        format: ValueFormat, writeType: WriteType = .withResponse
    ) {
        self.name = name
        self.characteristic = characteristic
        self.service = service
        self.operations = operations
        self.format = format
        self.writeType = writeType
    }
}
