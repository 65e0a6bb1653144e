/// Device Name (0x2A00), GAP (Core Specification Vol 3 Part C §12.1): a UTF-8 string.
extension UTF8StringCharacteristic {
    package static let deviceName = UTF8StringCharacteristic(uuid: 0x2A00, name: "device_name", field: "device_name")
}
