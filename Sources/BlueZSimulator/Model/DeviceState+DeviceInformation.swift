import Bluetooth

/// bluetoothd's deviceinfo profile: once a peer's services resolved, it reads the Device
/// Information service's PnP ID (0x2A50) and sets `Modalias` from it (against the VM's peripheral,
/// "[CHG] Device … Modalias: usb:v1D6Bp0246d0542" right after "ServicesResolved: yes").
extension DeviceState {
    static let pnpID = BluetoothUUID(UInt16(0x2A50))

    /// Sets `Modalias` from the PnP ID characteristic, when the database has one.
    mutating func readDeviceInformation() -> [Effect] {
        guard let id = gatt.characteristic(uuid: Self.pnpID),
            let text = Self.modalias(pnpID: characteristics[id]?.value ?? []), text != modalias
        else { return [] }
        modalias = text
        return [.changed(["Modalias"])]
    }

    /// `bluetooth:` (vendor ID source 1, Bluetooth SIG) or `usb:` (2, USB-IF) `vVVVVpPPPPdDDDD`, as
    /// bluetoothd formats it; nil for another source or a value shorter than 7 bytes.
    static func modalias(pnpID value: [UInt8]) -> String? {
        guard value.count >= 7 else { return nil }
        let prefix: String
        switch value[0] {
        case 1: prefix = "bluetooth"
        case 2: prefix = "usb"
        default: return nil
        }
        func field(_ at: Int) -> String {
            let number = UInt16(value[at]) | UInt16(value[at + 1]) << 8
            let digits = String(number, radix: 16, uppercase: true)
            return String(repeating: "0", count: 4 - digits.count) + digits
        }
        return "\(prefix):v\(field(1))p\(field(3))d\(field(5))"
    }
}
