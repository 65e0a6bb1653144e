/// Which D-Bus bus BlueZ is on: `"system"` (real hardware), `"session"`, or a D-Bus address such
/// as `"unix:path=/run/blebridge/bus"` (the simulator on a private bus).
package enum BusSelection: Sendable, Hashable, CustomStringConvertible {
    case system
    case session
    case address(String)

    static let accepted = "\"system\", \"session\" or a D-Bus address such as \"unix:path=/tmp/bus\""

    init?(text: String) {
        switch text {
        case "system": self = .system
        case "session": self = .session
        default:
            // A D-Bus address is `transport:key=value,…`.
            guard let colon = text.firstIndex(of: ":"), text[..<colon].allSatisfy(\.isLetter),
                text[text.index(after: colon)...].contains("=")
            else { return nil }
            self = .address(text)
        }
    }

    package var description: String {
        switch self {
        case .system: "system"
        case .session: "session"
        case .address(let address): address
        }
    }
}
