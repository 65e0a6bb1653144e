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
            bluetooth: Self.on, onlineDevices: 2, connectedDevices: 1, configuredDevices: 3,
            broker: .connected, outboxDepth: 0)
        #expect(
            status.text == "Bluetooth ready (hci0); devices 2/3 online (1 connected); broker connected; outbox empty")
    }

    @Test func brokerDownOutboxFilling() {
        let status = ServiceStatus(
            bluetooth: Self.on, onlineDevices: 3, connectedDevices: 3, configuredDevices: 3,
            broker: .disconnected, outboxDepth: 41)
        #expect(
            status.text
                == "Bluetooth ready (hci0); devices 3/3 online (3 connected); broker unreachable, retrying; outbox 41 queued"
        )
    }

    @Test func outboxRefusingWrites() {
        let status = ServiceStatus(
            bluetooth: Self.on, configuredDevices: 1, broker: .connected, outboxDepth: 7,
            outboxError: "disk_full")
        #expect(status.text.hasSuffix("; outbox 7 queued, refusing writes (disk_full)"))
    }

    static let on = BluetoothHealth(adapter: "hci0", adapterPresent: true, powered: true, problem: nil)

    /// Each Bluetooth problem reads differently, and says what to check where the user can act.
    @Test(arguments: [
        (
            BluetoothHealth.Problem.adapterPoweredOff,
            "Bluetooth unavailable (adapter_powered_off): hci0 powered off or rfkill-blocked"
        ),
        (
            .accessDenied,
            "Bluetooth unavailable (access_denied): the D-Bus policy denies this user org.bluez (group bluetooth? a deny rule?), retrying"
        ),
        (.adapterMissing, "Bluetooth unavailable (adapter_missing): no adapter hci0"),
        (.bluezNotRunning, "Bluetooth unavailable (bluez_not_running): bluetoothd not running"),
        (.bluezNotResponding, "Bluetooth unavailable (bluez_not_responding): bluetoothd not answering, retrying"),
        (.busUnavailable, "Bluetooth unavailable (bus_unavailable): D-Bus bus unreachable, retrying"),
        (.starting, "Bluetooth starting (hci0)"),
    ])
    func bluetoothProblems(problem: BluetoothHealth.Problem, expected: String) {
        let health = BluetoothHealth(adapter: "hci0", problem: problem)
        let text = ServiceStatus(bluetooth: health, configuredDevices: 1).text
        #expect(text.hasPrefix(expected + "; "), "\(text)")
    }

    @Test func oneLine() {
        let status = ServiceStatus(
            bluetooth: Self.on, onlineDevices: 99, connectedDevices: 99, configuredDevices: 99,
            broker: .connected, outboxDepth: 1_000_000, outboxError: "locked")
        #expect(!status.text.contains("\n"))
    }
}
