/// The input/output capability an `org.bluez.Agent1` registers with (`AgentManager1.RegisterAgent`); BlueZ and
/// the peer derive the pairing method from it (Just Works, passkey entry, numeric comparison).
public enum AgentCapability: String, Sendable, Hashable, CaseIterable {
    case displayOnly = "DisplayOnly"
    case displayYesNo = "DisplayYesNo"
    case keyboardOnly = "KeyboardOnly"
    case noInputNoOutput = "NoInputNoOutput"
    case keyboardDisplay = "KeyboardDisplay"
}
