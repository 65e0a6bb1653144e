/// Bus names the simulator uses.
public enum SimulatorNames {
    /// The name real BlueZ owns; the simulator claims it on its bus.
    public static let bluez = "org.bluez"
    /// The simulator's own control name, for tests and tools (fault injection, observation).
    public static let control = "io.blebridge.Simulator"
}
