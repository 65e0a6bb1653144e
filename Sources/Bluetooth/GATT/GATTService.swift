/// A GATT service of a peripheral (`CBService`): primary or secondary, its characteristics and the services it
/// includes (by identifier, because included services are services of the same peripheral).
public struct GATTService: Sendable, Hashable, Identifiable, CustomStringConvertible {
    public var id: GATTAttributeID
    public var uuid: BluetoothUUID
    public var isPrimary: Bool
    public var characteristics: [GATTCharacteristic]
    public var includedServiceIDs: [GATTAttributeID]
    /// The attribute handle when the backend knows it.
    public var handle: UInt16?

    public init(
        id: GATTAttributeID, uuid: BluetoothUUID, isPrimary: Bool = true, characteristics: [GATTCharacteristic] = [],
        includedServiceIDs: [GATTAttributeID] = [], handle: UInt16? = nil
    ) {
        self.id = id
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.characteristics = characteristics
        self.includedServiceIDs = includedServiceIDs
        self.handle = handle
    }

    public var description: String { "\(isPrimary ? "primary" : "secondary") service \(uuid)" }

    /// The first characteristic with this UUID.
    public func characteristic(_ uuid: BluetoothUUID) -> GATTCharacteristic? {
        characteristics.first { $0.uuid == uuid }
    }
}
