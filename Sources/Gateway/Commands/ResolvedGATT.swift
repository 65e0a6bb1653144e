import Bluetooth

/// A connected device's GATT database as resolved after connecting, for finding the
/// characteristic a subscription or command means: by UUID, and within a service when the
/// configuration names one (a device may have the same characteristic UUID in two services).
/// Without a service, the first service in the device's order that holds the UUID is used.
package struct ResolvedGATT: Sendable {
    /// One characteristic with the service holding it.
    package struct Entry: Sendable, Hashable {
        package var characteristic: GATTCharacteristic
        package var service: BluetoothUUID
    }

    package let device: String
    package private(set) var entries: [Entry] = []
    private var services: Set<BluetoothUUID> = []

    /// `services` in the device's order, each with its characteristics.
    package init(device: String, services: [(uuid: BluetoothUUID, characteristics: [GATTCharacteristic])]) {
        self.device = device
        for service in services {
            self.services.insert(service.uuid)
            entries += service.characteristics.map { Entry(characteristic: $0, service: service.uuid) }
        }
    }

    /// The characteristic `target` means; the failure says which part the device lacks.
    package func find(_ target: CharacteristicTarget) throws(CommandFailure) -> Entry {
        guard let service = target.service else {
            guard let entry = entries.first(where: { $0.characteristic.uuid == target.characteristic }) else {
                throw CommandFailure(.bleError, "\(device) has no characteristic \(Self.name(target.characteristic))")
            }
            return entry
        }
        guard services.contains(service) else {
            throw CommandFailure(.bleError, "\(device) has no service \(Self.name(service, service: true))")
        }
        guard
            let entry = entries.first(where: {
                $0.service == service && $0.characteristic.uuid == target.characteristic
            })
        else {
            throw CommandFailure(
                .bleError,
                "\(device) has no characteristic \(Self.name(target.characteristic)) in service \(Self.name(service, service: true))"
            )
        }
        return entry
    }

    /// `2a1e (intermediate_temperature)`, or the UUID alone when it has no assigned name.
    static func name(_ uuid: BluetoothUUID, service: Bool = false) -> String {
        let name = service ? AssignedNumbers.serviceName(for: uuid) : AssignedNumbers.characteristicName(for: uuid)
        return name.map { "\(uuid.shortString) (\($0))" } ?? uuid.shortString
    }
}
