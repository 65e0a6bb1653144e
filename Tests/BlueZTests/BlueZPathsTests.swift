import BlueZ
import Bluetooth
import Testing

@Suite struct BlueZPathsTests {
    @Test func devicePathsRoundTrip() throws {
        let address = try #require(BluetoothAddress("AA:BB:CC:DD:EE:FF"))
        let path = BlueZPaths.device(address, adapter: "hci0")
        #expect(path == "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF")
        #expect(BlueZPaths.address(fromDevicePath: path) == address)
        #expect(BlueZPaths.address(fromDevicePath: "/org/bluez/hci0") == nil)
    }
}
