/// The string characteristics of the Device Information Service 1.1 (§3.2–3.7).
extension UTF8StringCharacteristic {
    package static let modelNumber = UTF8StringCharacteristic(
        uuid: 0x2A24, name: "model_number_string", field: "model_number")
    package static let serialNumber = UTF8StringCharacteristic(
        uuid: 0x2A25, name: "serial_number_string", field: "serial_number")
    package static let firmwareRevision = UTF8StringCharacteristic(
        uuid: 0x2A26, name: "firmware_revision_string", field: "firmware_revision")
    package static let hardwareRevision = UTF8StringCharacteristic(
        uuid: 0x2A27, name: "hardware_revision_string", field: "hardware_revision")
    package static let softwareRevision = UTF8StringCharacteristic(
        uuid: 0x2A28, name: "software_revision_string", field: "software_revision")
    package static let manufacturerName = UTF8StringCharacteristic(
        uuid: 0x2A29, name: "manufacturer_name_string", field: "manufacturer_name")

    package static let deviceInformation = [
        modelNumber, serialNumber, firmwareRevision, hardwareRevision, softwareRevision, manufacturerName,
    ]
}
