import BlueZSimulator
import Testing

@Suite struct SimulatorNamesTests {
    @Test func controlNameIsSeparateFromBlueZ() {
        #expect(SimulatorNames.bluez == "org.bluez")
        #expect(SimulatorNames.control != SimulatorNames.bluez)
    }
}
