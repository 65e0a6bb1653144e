import DBus
import Foundation
import TestSupport
import Testing

@testable import BlueZ

/// The bluetoothd version probe on a real dbus-daemon: `org.bluez` owned by a real process (the
/// simulator, `exec -a`'d so its `argv[0]` is a temporary `…/bluetoothd` script that answers
/// `--version`), found through `GetConnectionUnixProcessID` and `/proc/<pid>/cmdline`.
@Suite(.serialized) struct BluetoothdVersionProbeTests {
    @Test func theOwnersArgumentZeroIsRunWithVersion() async throws {
        let bus = try await DBusDaemonFixture()
        let fake = try await FakeBluetoothd(busAddress: bus.address, versionOutput: "5.70")
        let blueZ = try await BlueZBus(.address(bus.address))
        let result = await blueZ.bluetoothdVersion()
        #expect(
            result
                == .success(
                    BluetoothdVersionProbe.Found(
                        version: BluetoothdVersion(major: 5, minor: 70), executable: fake.path,
                        processID: UInt32(fake.process.processIdentifier))), "\(result)")
        blueZ.close()
        await fake.stop()
        await bus.stop()
    }

    @Test func outputThatIsNoVersionIsUnparsable() async throws {
        let bus = try await DBusDaemonFixture()
        let fake = try await FakeBluetoothd(busAddress: bus.address, versionOutput: "bluetoothd five")
        let blueZ = try await BlueZBus(.address(bus.address))
        let result = await blueZ.bluetoothdVersion()
        #expect(Self.code(result) == .versionUnparsable, "\(result)")
        blueZ.close()
        await fake.stop()
        await bus.stop()
    }

    /// Whoever can own `org.bluez` on a bus chooses its `argv[0]`: a file others may change is not run.
    @Test func anExecutableWritableByOthersIsNotRun() async throws {
        let bus = try await DBusDaemonFixture()
        let fake = try await FakeBluetoothd(busAddress: bus.address, mode: 0o777)
        let blueZ = try await BlueZBus(.address(bus.address))
        let result = await blueZ.bluetoothdVersion()
        #expect(Self.code(result) == .untrustedExecutable, "\(result)")
        blueZ.close()
        await fake.stop()
        await bus.stop()
    }

    /// `--version` is killed when it does not exit within the bound.
    @Test func aVersionThatDoesNotComeInTimeIsAFailure() async throws {
        let bus = try await DBusDaemonFixture()
        let fake = try await FakeBluetoothd(busAddress: bus.address, versionDelay: 30)
        let blueZ = try await BlueZBus(.address(bus.address))
        let started = ContinuousClock.now
        let result = await blueZ.bluetoothdVersion(timeout: .milliseconds(300))
        #expect(Self.code(result) == .versionFailed, "\(result)")
        #expect(ContinuousClock.now - started < .seconds(20), "killed, not waited for")
        blueZ.close()
        await fake.stop()
        await bus.stop()
    }

    /// The simulator in this process (or anything not named bluetoothd) gives no version.
    @Test func anOwnerNotNamedBluetoothdGivesNoVersion() async throws {
        let bus = try await DBusDaemonFixture()
        let owner = try await DBusConnection(address: bus.address)
        try await owner.requestName("org.bluez")
        let blueZ = try await BlueZBus(.address(bus.address))
        let result = await blueZ.bluetoothdVersion()
        #expect(Self.code(result) == .notBluetoothd, "\(result)")
        owner.close()
        blueZ.close()
        await bus.stop()
    }

    @Test func noOwnerGivesNoProcessID() async throws {
        let bus = try await DBusDaemonFixture()
        let blueZ = try await BlueZBus(.address(bus.address))
        let result = await blueZ.bluetoothdVersion()
        #expect(Self.code(result) == .noProcessID, "\(result)")
        blueZ.close()
        await bus.stop()
    }

    static func code(_ result: Result<BluetoothdVersionProbe.Found, BluetoothdVersionError>) -> BluetoothdVersionError
        .Code?
    {
        if case .failure(let error) = result { return error.code }
        return nil
    }
}
