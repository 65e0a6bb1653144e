/// Bus names the simulator uses.
package enum SimulatorNames {
    /// The name real BlueZ owns; the simulator claims it on its bus.
    package static let bluez = "org.bluez"
    /// The simulator's own control name, for tests and tools (fault injection, observation).
    package static let control = "io.blebridge.Simulator"
}
