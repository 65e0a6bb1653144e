/// A descriptor of a characteristic (`CBDescriptor`).
public struct GATTDescriptor: Sendable, Hashable, Identifiable, CustomStringConvertible {
    public var id: GATTAttributeID
    public var uuid: BluetoothUUID
    /// The characteristic it belongs to.
    public var characteristicID: GATTAttributeID
    /// The attribute handle when the backend knows it.
    public var handle: UInt16?

    public init(id: GATTAttributeID, uuid: BluetoothUUID, characteristicID: GATTAttributeID, handle: UInt16? = nil) {
        self.id = id
        self.uuid = uuid
        self.characteristicID = characteristicID
        self.handle = handle
    }

    public var description: String { "descriptor \(uuid)" }

    /// Client Characteristic Configuration (0x2902): BlueZ manages it through StartNotify/AcquireNotify.
    public static let clientCharacteristicConfiguration = BluetoothUUID(UInt16(0x2902))
    /// Characteristic User Description (0x2901).
    public static let characteristicUserDescription = BluetoothUUID(UInt16(0x2901))
    /// Characteristic Presentation Format (0x2904).
    public static let characteristicPresentationFormat = BluetoothUUID(UInt16(0x2904))
}
