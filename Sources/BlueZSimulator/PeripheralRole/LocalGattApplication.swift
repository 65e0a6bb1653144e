import Bluetooth
import DBus

/// A GATT application a client registered with `GattManager1.RegisterApplication`, as bluetoothd
/// reads it from the client's `GetManagedObjects` below the application path (`src/gatt-database.c`).
package struct LocalGattApplication: Sendable, Equatable {
    package struct Descriptor: Sendable, Equatable {
        package var uuid: BluetoothUUID
        package var flags: [String]
        package var path: String
    }

    package struct Characteristic: Sendable, Equatable {
        package var uuid: BluetoothUUID
        package var flags: [String]
        package var path: String
        package var descriptors: [Descriptor]
    }

    package struct Service: Sendable, Equatable {
        package var uuid: BluetoothUUID
        package var primary: Bool
        package var path: String
        package var characteristics: [Characteristic]
    }

    /// The unique bus name that registered it.
    package let owner: String
    package let path: String
    package let services: [Service]

    /// Reads the application from a `GetManagedObjects` reply; nil when bluetoothd refuses it
    /// (`Failed` "Failed to register application"): no service, or an object without a valid `UUID`,
    /// a characteristic without `Flags` or outside the application's services.
    package init?(owner: String, path: String, managedObjects: [DBusObjectPath: DBusValue]) {
        self.owner = owner
        self.path = path
        var services: [String: Service] = [:]
        var characteristics: [String: Characteristic] = [:]
        var serviceOf: [String: String] = [:]
        var descriptors: [(owner: String, descriptor: Descriptor)] = []
        let prefix = path == "/" ? "/" : path + "/"
        for (objectPath, value) in managedObjects where objectPath.rawValue.hasPrefix(prefix) {
            guard let interfaces = value.asDictionary else { return nil }
            if let service = interfaces["org.bluez.GattService1"]?.asDictionary {
                guard let uuid = service["UUID"]?.asString.flatMap(BluetoothUUID.init) else { return nil }
                services[objectPath.rawValue] = Service(
                    uuid: uuid, primary: service["Primary"]?.asBool ?? true, path: objectPath.rawValue,
                    characteristics: [])
            }
            if let characteristic = interfaces["org.bluez.GattCharacteristic1"]?.asDictionary {
                guard let uuid = characteristic["UUID"]?.asString.flatMap(BluetoothUUID.init),
                    let flags = characteristic["Flags"]?.asStrings,
                    let service = characteristic["Service"]?.asObjectPath
                else { return nil }
                characteristics[objectPath.rawValue] = Characteristic(
                    uuid: uuid, flags: flags, path: objectPath.rawValue, descriptors: [])
                serviceOf[objectPath.rawValue] = service.rawValue
            }
            if let descriptor = interfaces["org.bluez.GattDescriptor1"]?.asDictionary {
                guard let uuid = descriptor["UUID"]?.asString.flatMap(BluetoothUUID.init),
                    let owner = descriptor["Characteristic"]?.asObjectPath
                else { return nil }
                descriptors.append(
                    (
                        owner.rawValue,
                        Descriptor(
                            uuid: uuid, flags: descriptor["Flags"]?.asStrings ?? [], path: objectPath.rawValue)
                    ))
            }
        }
        for (owner, descriptor) in descriptors {
            guard characteristics[owner] != nil else { return nil }
            characteristics[owner]!.descriptors.append(descriptor)
        }
        for (path, var characteristic) in characteristics.sorted(by: { $0.key < $1.key }) {
            guard let service = serviceOf[path], services[service] != nil else { return nil }
            characteristic.descriptors.sort { $0.path < $1.path }
            services[service]!.characteristics.append(characteristic)
        }
        guard !services.isEmpty else { return nil }
        self.services = services.values.sorted { $0.path < $1.path }
    }

    /// The first characteristic with this UUID.
    package func characteristic(_ uuid: BluetoothUUID) -> Characteristic? {
        services.lazy.flatMap(\.characteristics).first { $0.uuid == uuid }
    }
}
