import DBus

/// BlueZ's bus name, interface names and the error names the library tests for (`doc/*-api.txt`).
enum BlueZNames {
    static let service = "org.bluez"
    /// The error bluetoothd answers a request with while one of its kind is under way on the attribute
    /// (from any client), or a `Connect` while one runs.
    static let inProgressError = DBusErrorName("org.bluez.Error.InProgress")
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let gattService = "org.bluez.GattService1"
    static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    static let gattDescriptor = "org.bluez.GattDescriptor1"
    static let agentManager = "org.bluez.AgentManager1"
    static let agent = "org.bluez.Agent1"
    static let advertisementMonitorManager = "org.bluez.AdvertisementMonitorManager1"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"
}
