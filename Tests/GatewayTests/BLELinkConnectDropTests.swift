import BlueZSimulator
import Synchronization
import TestSupport
import Testing

@testable import Gateway

/// A link that drops while the connect is being completed (the peripheral stored in the state
/// database, which a slow SD card can make last) is not reported `connected` after its drop: the
/// pool would hold a link that was gone, and a keep-connected device would never be connected
/// again (without a `silence_timeout`).
@Suite(.timeLimit(.minutes(2))) struct BLELinkConnectDropTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let json =
        #"{"devices": [{"id": "strap", "match": {"address": "\#(strap)"}, "connection": "keep_connected", "#
        + #""subscribe": [{"characteristic": "heart_rate_measurement"}]}]}"#

    /// What the link reported, and the hold on storing the peripheral.
    final class Recorder: Sendable {
        let events = Mutex<[BLELink.Event]>([])
        let remembering = Mutex(false)
        let release = Mutex(false)

        /// The strap's last link event: `connected`, `disconnected` or `connectFailed`.
        var lastLinkEvent: BLELink.Event? {
            events.withLock { events in
                events.last { event in
                    switch event {
                    case .connected, .disconnected, .connectFailed: true
                    default: false
                    }
                }
            }
        }
    }

    @Test func aLinkDroppedWhileThePeripheralIsStoredIsNotReportedConnected() async throws {
        let recorder = Recorder()
        let world = try await SimulatedLink(json: Self.json, prefix: "link-drop") { _ in Self.host(recorder) }
        let (link, simulator) = (world.link, world.simulator)
        await link.start()
        #expect(await waitUntil(timeout: .seconds(30)) { await link.peripherals["strap"] != nil }, "strap not seen")

        await link.connect("strap")
        // The connect has subscribed and is storing the peripheral: the link drops now, and the
        // store returns only once the link has reported the drop.
        #expect(await waitUntil(timeout: .seconds(30)) { recorder.remembering.withLock { $0 } }, "never stored")
        try await simulator.disconnect(address: Self.strap)
        let dropReported = await waitUntil(timeout: .seconds(10)) {
            recorder.events.withLock { $0.contains(.disconnected("strap", expected: false)) }
        }
        #expect(dropReported, "the drop was not reported: \(recorder.events.withLock { $0 })")
        recorder.release.withLock { $0 = true }

        let settled = await waitUntil(timeout: .seconds(10)) {
            if case .connectFailed("strap", _)? = recorder.lastLinkEvent { return true }
            return false
        }
        #expect(settled, "the strap's link events: \(recorder.events.withLock { $0 })")
        #expect(try await simulator.snapshot(address: Self.strap).connected == false)

        await world.close()
    }

    /// A host that records every event and holds `remember` until released (10 s at most).
    static func host(_ recorder: Recorder) -> BLELink.Host {
        BLELink.Host(
            report: { event, _ in recorder.events.withLock { $0.append(event) } },
            seen: { _, _, _, _ in true }, assignMatch: { _, template in template },
            addAutoDevice: { _, _, _ in nil }, knownPeripherals: { [] },
            remember: { _ in
                recorder.remembering.withLock { $0 = true }
                _ = await waitUntil(timeout: .seconds(10)) { recorder.release.withLock { $0 } }
            })
    }
}
