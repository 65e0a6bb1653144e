import Bluetooth

/// Object paths in BlueZ's tree (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service000c/char000d`).
package enum BlueZPaths {
    package static let root = "/org/bluez"

    /// `/org/bluez/hci0` for adapter `hci0`.
    package static func adapter(_ name: String) -> String { "\(root)/\(name)" }

    /// `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    package static func device(_ address: BluetoothAddress, adapter: String) -> String {
        "\(self.adapter(adapter))/\(address.bluezPathComponent)"
    }

    /// The address encoded in a device path, or nil when the path is not a device path.
    package static func address(fromDevicePath path: String) -> BluetoothAddress? {
        guard let component = path.split(separator: "/").last, component.hasPrefix("dev_") else { return nil }
        return BluetoothAddress(component.dropFirst(4).split(separator: "_").joined(separator: ":"))
    }
}
