/// A characteristic of a service (`CBCharacteristic`), with its declared properties and its descriptors.
///
/// A value type: the value itself is not cached here; `Peripheral.readValue(for:)` always reads afresh and
/// `notifications(for:)` delivers updates.
public struct GATTCharacteristic: Sendable, Hashable, Identifiable, CustomStringConvertible {
    public var id: GATTAttributeID
    public var uuid: BluetoothUUID
    public var properties: CharacteristicProperties
    /// The service it belongs to.
    public var serviceID: GATTAttributeID
    public var descriptors: [GATTDescriptor]
    /// The attribute handle when the backend knows it.
    public var handle: UInt16?

    public init(
        id: GATTAttributeID, uuid: BluetoothUUID, properties: CharacteristicProperties, serviceID: GATTAttributeID,
        descriptors: [GATTDescriptor] = [], handle: UInt16? = nil
    ) {
        self.id = id
        self.uuid = uuid
        self.properties = properties
        self.serviceID = serviceID
        self.descriptors = descriptors
        self.handle = handle
    }

    public var description: String { "characteristic \(uuid) \(properties)" }

    /// The first descriptor with this UUID.
    public func descriptor(_ uuid: BluetoothUUID) -> GATTDescriptor? {
        descriptors.first { $0.uuid == uuid }
    }
}
