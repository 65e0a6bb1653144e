import Bluetooth
import Gateway
import Testing

/// The `STATUS=` line `systemctl status` shows.
@Suite struct ServiceStatusTests {
    @Test func beforeAnythingIsKnown() {
        #expect(
            ServiceStatus(configuredDevices: 3).text
                == "Bluetooth starting; devices 0/3 online; broker connecting; outbox opening")
    }

    @Test func runningNormally() {
        let status = ServiceStatus(
            bluetooth: .manager(.poweredOn), onlineDevices: 2, connectedDevices: 1, configuredDevices: 3,
            broker: .connected, outboxDepth: 0)
        #expect(status.text == "Bluetooth on; devices 2/3 online (1 connected); broker connected; outbox empty")
    }

    @Test func brokerDownOutboxFilling() {
        let status = ServiceStatus(
            bluetooth: .manager(.poweredOn), onlineDevices: 3, connectedDevices: 3, configuredDevices: 3,
            broker: .disconnected, outboxDepth: 41)
        #expect(
            status.text
                == "Bluetooth on; devices 3/3 online (3 connected); broker unreachable, retrying; outbox 41 queued")
    }

    @Test func outboxRefusingWrites() {
        let status = ServiceStatus(
            bluetooth: .manager(.poweredOn), configuredDevices: 1, broker: .connected, outboxDepth: 7,
            outboxError: "disk_full")
        #expect(status.text.hasSuffix("; outbox 7 queued, refusing writes (disk_full)"))
    }

    /// Each Bluetooth state reads differently, and says what to check where the user can act.
    @Test(arguments: [
        (ServiceStatus.BluetoothState.manager(.poweredOff), "Bluetooth off (powered off or rfkill-blocked)"),
        (.manager(.unauthorized), "Bluetooth access denied (user not in group bluetooth?)"),
        (.manager(.unsupported), "Bluetooth no adapter (or bluetoothd not running)"),
        (.manager(.resetting), "Bluetooth resetting"),
        (.manager(.unknown), "Bluetooth starting"),
        (.unreachable, "Bluetooth unreachable (is bluetoothd running?)"),
    ])
    func bluetoothStates(state: ServiceStatus.BluetoothState, expected: String) {
        let text = ServiceStatus(bluetooth: state, configuredDevices: 1).text
        #expect(text.hasPrefix(expected + "; "), "\(text)")
    }

    @Test func oneLine() {
        let status = ServiceStatus(
            bluetooth: .manager(.poweredOn), onlineDevices: 99, connectedDevices: 99, configuredDevices: 99,
            broker: .connected, outboxDepth: 1_000_000, outboxError: "locked")
        #expect(!status.text.contains("\n"))
    }
}
