import Foundation
import TestSupport
import Testing

/// Issue 17: `bluetooth.scan.mode` `"passive"` is never done as an active scan. The simulator has
/// no `org.bluez.AdvertisementMonitorManager1` (as bluetoothd without experimental features), so
/// `blebridge run` stops at start with exit status 78 and says what is missing.
@Suite(.serialized) struct PassiveScanEndToEndTests {
    @Test func passiveModeWithoutAdvertisementMonitorsStopsAtStartNamingWhatIsMissing() async throws {
        let world = try await SimulatedWorld { configuration in
            var bluetooth = configuration["bluetooth"] as? [String: Any] ?? [:]
            var scan = bluetooth["scan"] as? [String: Any] ?? [:]
            scan["mode"] = "passive"
            bluetooth["scan"] = scan
            configuration["bluetooth"] = bluetooth
        }
        let status = await world.gateway.process.waitForExit(timeout: .seconds(30))
        let log = world.gateway.log
        #expect(status == 78, "log: \(log.suffix(3000))")
        #expect(log.contains("monitor_unsupported"), "\(log.suffix(3000))")
        #expect(log.contains("no org.bluez.AdvertisementMonitorManager1"), "\(log.suffix(3000))")
        #expect(log.contains("set bluetooth.scan.mode to \"active\""), "\(log.suffix(3000))")
        #expect(world.states("bthome").isEmpty, "nothing was scanned actively")
        await world.shutdown()
    }
}
