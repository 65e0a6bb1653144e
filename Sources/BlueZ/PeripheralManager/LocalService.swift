import Bluetooth

/// A GATT service this machine serves to remote centrals, published by ``PeripheralManager``.
public struct LocalService: Sendable {
    public var uuid: BluetoothUUID
    public var isPrimary: Bool
    public var characteristics: [LocalCharacteristic]

    public init(uuid: BluetoothUUID, isPrimary: Bool = true, characteristics: [LocalCharacteristic]) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.characteristics = characteristics
    }
}

/// A characteristic of a ``LocalService``: its properties and the async handlers that answer
/// remote reads and writes.
public struct LocalCharacteristic: Sendable {
    public typealias ReadHandler = @Sendable (LocalReadRequest) async throws(ATTError) -> [UInt8]
    public typealias WriteHandler = @Sendable (LocalWriteRequest) async throws(ATTError) -> Void

    public var uuid: BluetoothUUID
    public var properties: CharacteristicProperties
    public var descriptors: [LocalDescriptor]
    /// Answers reads; nil serves the last value set with ``PeripheralManager/updateValue(_:for:)``.
    public var onRead: ReadHandler?
    /// Receives writes (with and without response); nil accepts them and stores the value.
    public var onWrite: WriteHandler?

    public init(
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
public struct LocalDescriptor: Sendable {
    public var uuid: BluetoothUUID
    public var value: [UInt8]
    public var writable: Bool

    public init(uuid: BluetoothUUID, value: [UInt8], writable: Bool = false) {
        self.uuid = uuid
        self.value = value
        self.writable = writable
    }
}

/// A remote central's read of a local characteristic.
public struct LocalReadRequest: Sendable {
    /// BlueZ's object path of the remote device (`/org/bluez/hci1/dev_…`), when given.
    public var device: String?
    public var offset: Int
    public var mtu: Int?
}

/// A remote central's write to a local characteristic.
public struct LocalWriteRequest: Sendable {
    public var device: String?
    public var value: [UInt8]
    public var offset: Int
    public var type: WriteKind
    public var mtu: Int?

    /// How the central wrote: with response (`request`), without (`command`), or `reliable`.
    public enum WriteKind: String, Sendable {
        case request, command, reliable
    }
}
