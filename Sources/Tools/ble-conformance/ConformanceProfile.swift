import Bluetooth

/// The UUIDs the conformance scenario uses: a heart-rate strap, a lamp and a thermometer, the
/// same as the simulator's demo devices, so one central scenario runs against both.
enum ConformanceProfile {
    static let heartRateService = BluetoothUUID(UInt16(0x180D))
    static let heartRateMeasurement = BluetoothUUID(UInt16(0x2A37))
    static let bodySensorLocation = BluetoothUUID(UInt16(0x2A38))
    static let batteryService = BluetoothUUID(UInt16(0x180F))
    static let batteryLevel = BluetoothUUID(UInt16(0x2A19))
    static let thermometerService = BluetoothUUID(UInt16(0x1809))
    static let temperatureMeasurement = BluetoothUUID(UInt16(0x2A1C))
    static let lampService = BluetoothUUID("6b1e0001-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let lampPower = BluetoothUUID("6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let lampBrightness = BluetoothUUID("6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
}
