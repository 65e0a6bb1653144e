import Bluetooth

/// A GATT service this machine serves to remote centrals, published by ``PeripheralManager``.
package struct LocalService: Sendable {
    package var uuid: BluetoothUUID
    package var isPrimary: Bool
    package var characteristics: [LocalCharacteristic]

    package init(uuid: BluetoothUUID, isPrimary: Bool = true, characteristics: [LocalCharacteristic]) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.characteristics = characteristics
    }
}

/// A characteristic of a ``LocalService``: its properties and the async handlers that answer
/// remote reads and writes.
package struct LocalCharacteristic: Sendable {
    package typealias ReadHandler = @Sendable (LocalReadRequest) async throws(ATTError) -> [UInt8]
    package typealias WriteHandler = @Sendable (LocalWriteRequest) async throws(ATTError) -> Void

    package var uuid: BluetoothUUID
    package var properties: CharacteristicProperties
    package var descriptors: [LocalDescriptor]
    /// Answers reads; nil serves the last value set with ``PeripheralManager/updateValue(_:for:)``.
    package var onRead: ReadHandler?
    /// Receives writes (with and without response); nil accepts them and stores the value.
    package var onWrite: WriteHandler?

    package init(
        uuid: BluetoothUUID, properties: CharacteristicProperties, descriptors: [LocalDescriptor] = [],
        onRead: ReadHandler? = nil, onWrite: WriteHandler? = nil
    ) {
        self.uuid = uuid
        self.properties = properties
        self.descriptors = descriptors
        self.onRead = onRead
        self.onWrite = onWrite
    }
}

/// A descriptor with a fixed value (e.g. Characteristic User Description 0x2901).
package struct LocalDescriptor: Sendable {
    package var uuid: BluetoothUUID
    package var value: [UInt8]
    package var writable: Bool

    package init(uuid: BluetoothUUID, value: [UInt8], writable: Bool = false) {
        self.uuid = uuid
        self.value = value
        self.writable = writable
    }
}

/// A remote central's read of a local characteristic.
package struct LocalReadRequest: Sendable {
    /// BlueZ's object path of the remote device (`/org/bluez/hci1/dev_…`), when given.
    package var device: String?
    package var offset: Int
    package var mtu: Int?
}

/// A remote central's write to a local characteristic.
package struct LocalWriteRequest: Sendable {
    package var device: String?
    package var value: [UInt8]
    package var offset: Int
    package var type: WriteKind
    package var mtu: Int?

    /// How the central wrote: with response (`request`), without (`command`), or `reliable`.
    package enum WriteKind: String, Sendable {
        case request, command, reliable
    }
}
