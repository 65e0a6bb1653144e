import BlueZ
import Bluetooth
import Decoders
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Gateway

/// ``BLELink`` runs on the D-Bus thread it keeps for its whole life (``BlueZBusThread``), the thread
/// its central and peripherals are pinned to; the advertisements they report are decoded off that
/// thread (``AdvertisementIntake``, on the pool), so decoding never holds up a signal or a reply.
@Suite(.timeLimit(.minutes(2))) struct BLELinkThreadTests {
    static let bthome = "C0:FF:EE:00:00:03"
    static let json =
        #"{"devices": [{"id": "bthome", "match": {"address": "\#(bthome)"}, "connection": "passive", "#
        + #""advertisement": {"decoder": "bthome"}}]}"#

    /// The names of the threads something ran on.
    final class Threads: Sendable {
        let names = Mutex<[String]>([])
    }

    /// A link on a bus that is not there: its code runs on the thread it was given, before the bus
    /// is open, while it retries, and after it stopped (the link was on Swift's pool before).
    @Test func theLinkRunsOnItsBusThread() async throws {
        let directory = try TemporaryDirectory(prefix: "link-thread")
        let gateway = try await unstartedGateway(in: directory, json: Self.json)
        let (configuration, pipeline, clock) = await (gateway.model.configuration, gateway.pipeline, gateway.clock)
        let thread = try BlueZBusThread()
        let link = BLELink(
            host: Self.host { _ in }, configuration: configuration,
            busAddress: "unix:path=\(directory.file("no-bus").path)", pipeline: pipeline, clock: clock,
            thread: thread)
        #expect(await link.onItsThread())
        await link.start()
        #expect(await link.onItsThread())
        #expect(await link.threadName() == "blebridge.dbus")
        await link.stop(until: .now + .seconds(1))
        #expect(await link.onItsThread())
        await gateway.stop()
    }

    /// The simulator's BTHome sensor advertises; the link (on the D-Bus thread, with the central that
    /// reports the advertisements) hands them on, and every one is decoded on another thread.
    @Test func advertisementsAreDecodedOffTheBusThread() async throws {
        let threads = Threads()
        var decoders = DecoderRegistry.standard
        decoders.register(ObservedBTHomeDecoder { threads.names.withLock { $0.append(ThreadNames.current()) } })
        let world = try await SimulatedLink(json: Self.json, prefix: "link-decode", decoders: decoders) { _ in
            Self.host { _ in }
        }
        let link = world.link
        await link.start()

        let decoded = await waitUntil(timeout: .seconds(30)) { !threads.names.withLock(\.isEmpty) }
        #expect(decoded, "no decoded advertisement of the BTHome sensor")
        let names = threads.names.withLock { $0 }
        #expect(!names.isEmpty)
        #expect(!names.contains("blebridge.dbus"), "decoded on: \(Set(names))")
        #expect(await link.threadName() == "blebridge.dbus")

        await world.close()
    }

    /// A host that reports to `report` and answers as a gateway without shared-broker mode would.
    static func host(_ report: @escaping @Sendable (BLELink.Event) -> Void) -> BLELink.Host {
        BLELink.Host(
            report: { event, _ in report(event) }, seen: { _, _, _, _ in true },
            assignMatch: { _, template in template },
            addAutoDevice: { _, _, _ in nil }, knownPeripherals: { [] }, remember: { _ in })
    }
}

extension BLELink {
    /// Whether the link's code runs on the very thread it was given.
    fileprivate func onItsThread() -> Bool { thread.isCurrentThread }

    /// The kernel's name of the thread the link's code runs on.
    fileprivate func threadName() -> String { ThreadNames.current() }
}
