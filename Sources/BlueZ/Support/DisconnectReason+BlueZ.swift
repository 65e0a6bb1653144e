import Bluetooth

extension DisconnectReason {
    /// Maps the reason of BlueZ's `Device1.Disconnected` signal (`org.bluez.Reason.Local`, `.Remote`, `.Timeout`,
    /// `.Authentication`, `.Suspend`, `.Unknown`; BlueZ 5.72 and later).
    package init(bluezReason: String) {
        switch bluezReason.split(separator: ".").last.map(String.init) {
        case "Local": self = .local
        case "Remote": self = .remote
        case "Timeout": self = .timeout
        case "Authentication": self = .authentication
        case "Suspend": self = .suspend
        default: self = .unknown
        }
    }
}
