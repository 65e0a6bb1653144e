/// Bytes at a fixed offset of a format's payload (for service data: after the UUID) that its
/// advertisements carry. The passive scan listens for them where bluetoothd compares a
/// service-data pattern with the bytes after the UUID, as 5.71 and later do
/// (docs/configuration.md, "Passive scanning").
public struct PayloadMarker: Sendable, Hashable {
    package var offset: Int
    package var bytes: [UInt8]

    package init(offset: Int = 0, _ bytes: [UInt8]) {
        self.offset = offset
        self.bytes = bytes
    }
}
