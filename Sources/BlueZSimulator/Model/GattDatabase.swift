import Bluetooth

/// A device's attribute table as bluetoothd discovers it: handles allocated like a real peer
/// (GAP 0x0001–0x0007, GATT 0x0008–0x000b, then the scenario's services from 0x000c), so object
/// paths read `service000c/char000d/desc000f` exactly as BlueZ names them.
package struct GattDatabase: Sendable, Equatable {
    package struct Service: Sendable, Equatable {
        package var handle: UInt16
        package var uuid: BluetoothUUID
        package var primary: Bool
        package var characteristics: [Characteristic]
        /// `service000c`.
        package var pathComponent: String { "service" + hex4(handle) }
    }

    package struct Characteristic: Sendable, Equatable {
        /// The declaration handle (BlueZ names the object after it); the value handle is the next one.
        package var handle: UInt16
        package var uuid: BluetoothUUID
        package var properties: Set<CharacteristicProperty>
        package var spec: ScenarioCharacteristic
        package var descriptors: [Descriptor]
        package var valueHandle: UInt16 { handle + 1 }
        package var pathComponent: String { "char" + hex4(handle) }
        package var canNotify: Bool { properties.contains(.notify) || properties.contains(.indicate) }
    }

    package struct Descriptor: Sendable, Equatable {
        package var handle: UInt16
        package var uuid: BluetoothUUID
        package var value: [UInt8]
        /// The scenario's descriptor (nil for the CCCD the database adds).
        package var spec: ScenarioDescriptor? = nil
        package var pathComponent: String { "desc" + hex4(handle) }
    }

    /// Identifies a characteristic by service and characteristic index.
    package struct CharacteristicID: Sendable, Hashable {
        package var service: Int
        package var characteristic: Int
    }

    package var services: [Service]

    /// The Generic Attribute service every peer has; bluetoothd exports it (GAP 0x1800 is claimed and hidden).
    /// Added before the scenario's services unless the scenario declares one itself.
    static let genericAttribute = ScenarioService(
        uuid: BluetoothUUID(UInt16(0x1801)),
        characteristics: [
            ScenarioCharacteristic(uuid: BluetoothUUID(UInt16(0x2A05)), properties: [.indicate], notifyOnWrite: false)
        ])

    package init(services scenarioServices: [ScenarioService]) {
        guard !scenarioServices.isEmpty else {
            services = []
            return
        }
        var next: UInt16 = 0x0008
        var built: [Service] = []
        // A scenario that declares its own Generic Attribute service (a mirror of a real peer's
        // database) gets that one only: a peer has one, and bluetoothd exports it once.
        let declaresGATT = scenarioServices.contains { $0.uuid == Self.genericAttribute.uuid }
        for scenarioService in (declaresGATT ? [] : [Self.genericAttribute]) + scenarioServices {
            let serviceHandle = next
            next += 1
            var characteristics: [Characteristic] = []
            for spec in scenarioService.characteristics {
                let handle = next
                next += 2  // declaration + value
                var descriptors: [Descriptor] = []
                if spec.properties.contains(.notify) || spec.properties.contains(.indicate) {
                    descriptors.append(
                        Descriptor(
                            handle: next, uuid: ScenarioDescriptor.clientCharacteristicConfiguration, value: [0, 0]))
                    next += 1
                }
                for descriptor in spec.descriptors {
                    descriptors.append(
                        Descriptor(handle: next, uuid: descriptor.uuid, value: descriptor.value, spec: descriptor))
                    next += 1
                }
                characteristics.append(
                    Characteristic(
                        handle: handle, uuid: spec.uuid, properties: spec.properties, spec: spec,
                        descriptors: descriptors))
            }
            built.append(
                Service(
                    handle: serviceHandle, uuid: scenarioService.uuid, primary: scenarioService.primary,
                    characteristics: characteristics))
        }
        services = built
    }

    /// Every characteristic with its identifier, in handle order.
    package var allCharacteristics: [(id: CharacteristicID, characteristic: Characteristic)] {
        services.enumerated().flatMap { serviceIndex, service in
            service.characteristics.enumerated().map {
                (CharacteristicID(service: serviceIndex, characteristic: $0), $1)
            }
        }
    }

    /// The first characteristic with `uuid` (scenarios address characteristics by UUID in the control channel).
    /// With `service`, the one in that service (a UUID can appear in several services).
    package func characteristic(uuid: BluetoothUUID, service: BluetoothUUID? = nil) -> CharacteristicID? {
        allCharacteristics.first {
            $0.characteristic.uuid == uuid && (service == nil || services[$0.id.service].uuid == service)
        }?.id
    }

    package subscript(id: CharacteristicID) -> Characteristic {
        services[id.service].characteristics[id.characteristic]
    }

    /// Service UUIDs as `Device1.UUIDs` lists them after resolution (sorted 128-bit strings, no duplicates).
    package var uuidStrings: [String] {
        Set(services.map(\.uuid.uuidString) + [BluetoothUUID(UInt16(0x1800)).uuidString]).sorted()
    }
}

func hex4(_ value: UInt16) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 4 - digits.count) + digits
}
