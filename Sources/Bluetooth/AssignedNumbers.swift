/// Names of the Bluetooth SIG services and characteristics BLEBridge works with, so that a
/// configuration can say `heart_rate_measurement` instead of `2a37`.
///
/// Names are the SIG's names in lower snake case. Only the SIG-assigned UUIDs the product
/// decodes or commonly meets are listed; any other UUID is written as hex.
public enum AssignedNumbers {
    /// Characteristic name → 16-bit UUID.
    public static let characteristics: [(name: String, uuid: BluetoothUUID)] = [
        ("device_name", BluetoothUUID(UInt16(0x2A00))),
        ("appearance", BluetoothUUID(UInt16(0x2A01))),
        ("alert_level", BluetoothUUID(UInt16(0x2A06))),
        ("tx_power_level", BluetoothUUID(UInt16(0x2A07))),
        ("glucose_measurement", BluetoothUUID(UInt16(0x2A18))),
        ("battery_level", BluetoothUUID(UInt16(0x2A19))),
        ("temperature_measurement", BluetoothUUID(UInt16(0x2A1C))),
        ("temperature_type", BluetoothUUID(UInt16(0x2A1D))),
        ("intermediate_temperature", BluetoothUUID(UInt16(0x2A1E))),
        ("measurement_interval", BluetoothUUID(UInt16(0x2A21))),
        ("system_id", BluetoothUUID(UInt16(0x2A23))),
        ("model_number_string", BluetoothUUID(UInt16(0x2A24))),
        ("serial_number_string", BluetoothUUID(UInt16(0x2A25))),
        ("firmware_revision_string", BluetoothUUID(UInt16(0x2A26))),
        ("hardware_revision_string", BluetoothUUID(UInt16(0x2A27))),
        ("software_revision_string", BluetoothUUID(UInt16(0x2A28))),
        ("manufacturer_name_string", BluetoothUUID(UInt16(0x2A29))),
        ("current_time", BluetoothUUID(UInt16(0x2A2B))),
        ("blood_pressure_measurement", BluetoothUUID(UInt16(0x2A35))),
        ("heart_rate_measurement", BluetoothUUID(UInt16(0x2A37))),
        ("body_sensor_location", BluetoothUUID(UInt16(0x2A38))),
        ("heart_rate_control_point", BluetoothUUID(UInt16(0x2A39))),
        ("rsc_measurement", BluetoothUUID(UInt16(0x2A53))),
        ("csc_measurement", BluetoothUUID(UInt16(0x2A5B))),
        ("cycling_power_measurement", BluetoothUUID(UInt16(0x2A63))),
        ("pressure", BluetoothUUID(UInt16(0x2A6D))),
        ("temperature", BluetoothUUID(UInt16(0x2A6E))),
        ("humidity", BluetoothUUID(UInt16(0x2A6F))),
        ("weight_measurement", BluetoothUUID(UInt16(0x2A9D))),
    ]

    /// Service name → 16-bit UUID.
    public static let services: [(name: String, uuid: BluetoothUUID)] = [
        ("generic_access", BluetoothUUID(UInt16(0x1800))),
        ("generic_attribute", BluetoothUUID(UInt16(0x1801))),
        ("immediate_alert", BluetoothUUID(UInt16(0x1802))),
        ("link_loss", BluetoothUUID(UInt16(0x1803))),
        ("tx_power", BluetoothUUID(UInt16(0x1804))),
        ("current_time", BluetoothUUID(UInt16(0x1805))),
        ("glucose", BluetoothUUID(UInt16(0x1808))),
        ("health_thermometer", BluetoothUUID(UInt16(0x1809))),
        ("device_information", BluetoothUUID(UInt16(0x180A))),
        ("heart_rate", BluetoothUUID(UInt16(0x180D))),
        ("battery", BluetoothUUID(UInt16(0x180F))),
        ("blood_pressure", BluetoothUUID(UInt16(0x1810))),
        ("running_speed_and_cadence", BluetoothUUID(UInt16(0x1814))),
        ("cycling_speed_and_cadence", BluetoothUUID(UInt16(0x1816))),
        ("cycling_power", BluetoothUUID(UInt16(0x1818))),
        ("environmental_sensing", BluetoothUUID(UInt16(0x181A))),
        ("body_composition", BluetoothUUID(UInt16(0x181B))),
        ("weight_scale", BluetoothUUID(UInt16(0x181D))),
        ("bthome", BluetoothUUID(UInt16(0xFCD2))),
    ]

    /// The characteristic UUID for a name in ``characteristics`` (case-insensitive), or nil.
    public static func characteristic(named name: String) -> BluetoothUUID? {
        let key = name.lowercased()
        return characteristics.first { $0.name == key }?.uuid
    }

    /// The service UUID for a name in ``services`` (case-insensitive), or nil.
    public static func service(named name: String) -> BluetoothUUID? {
        let key = name.lowercased()
        return services.first { $0.name == key }?.uuid
    }

    /// The name of a known characteristic UUID, or nil.
    public static func characteristicName(for uuid: BluetoothUUID) -> String? {
        characteristics.first { $0.uuid == uuid }?.name
    }

    /// The name of a known service UUID, or nil.
    public static func serviceName(for uuid: BluetoothUUID) -> String? {
        services.first { $0.uuid == uuid }?.name
    }
}
