import Foundation
import MQTT
import Outbox
import TestSupport
import Testing

/// Issue 21, "no reading lost across a gateway's SIGKILL: it is delivered late, when that gateway
/// returns". Three gateways on one mosquitto (as `MultiGatewayEndToEndTests`); gw-a, the strap's
/// owner, reaches the broker through a proxy that is paused, so gw-a's readings stop reaching the
/// broker while its connection stays up (a stalled network) and pile up in its outbox. gw-a is
/// then SIGKILLed; the readings its outbox kept must reach the broker when it returns.
@Suite(.serialized) struct MultiGatewayNoLossEndToEndTests {
    @Test func readingsTheDeadOwnerHadBufferedAreDeliveredWhenItReturns() async throws {
        let broker = try await MosquittoFixture()
        let proxy = try TCPProxy(upstreamPort: broker.port)
        defer { proxy.stop() }
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        let view = MultiGatewayEndToEndTests.View(recorder: recorder)
        var members: [String: SharedBrokerEndToEndTests.Member] = [:]
        for id in ["gw-a", "gw-b", "gw-c"] {
            members[id] = try await SharedBrokerEndToEndTests.Member(
                id: id, brokerURL: id == "gw-a" ? proxy.url : broker.url,
                scenario: try MultiGatewayEndToEndTests.scenario(id), edit: MultiGatewayEndToEndTests.configure)
        }
        func logs() -> String { MultiGatewayEndToEndTests.logs(members) }
        let gatewayA = members["gw-a"]!.gateway
        let strap = "blebridge/hr_strap"

        // The strap on gw-a (the nearest), its readings flowing.
        let owned = await recorder.wait(timeout: .seconds(40)) { _ in
            view.settled("hr_strap", on: "gw-a") && !recorder.on(strap).isEmpty
        }
        #expect(owned, "\(logs())")
        guard owned else { return await stop(members, recorder, broker) }

        // The network between gw-a and the broker stalls: its readings wait for their PUBACK
        // until `outbox.spill_after` (2 s), then go to the outbox, and the next ones through it.
        let spillsBefore = gatewayA.log.components(separatedBy: "written to the outbox").count
        proxy.pause()
        let paused = Date()
        let spilled = await recorder.wait(timeout: .seconds(20)) { _ in
            gatewayA.log.components(separatedBy: "written to the outbox").count > spillsBefore
        }
        #expect(spilled, "gw-a never wrote its held readings to the outbox\n\(gatewayA.log.suffix(3000))")

        // gw-a dies; the proxy ends its broker connection, so its will goes out and gw-b takes over.
        let killed = Date()
        gatewayA.process.signal(SIGKILL)
        await gatewayA.process.waitForExit()
        let will = await SharedBrokerEndToEndTests.recordArrival(
            "gw-a", "offline", on: recorder, after: paused, timeout: .seconds(10))
        #expect(will != nil, "no will of gw-a")
        let failedOver = await recorder.wait(timeout: .seconds(20)) { _ in view.settled("hr_strap", on: "gw-b") }
        #expect(failedOver, "\(logs())")

        // What gw-a's outbox kept: readings the broker never acknowledged.
        let store = try await OutboxStore(path: gatewayA.outboxPath)
        let kept = try await store.next(limit: 100_000).filter { $0.entry.topic == strap }.map(\.entry.payload)
        await store.close()
        #expect(!kept.isEmpty, "gw-a's outbox kept no strap reading\n\(gatewayA.log.suffix(3000))")
        let keptTexts = Set(kept.map { String(decoding: $0, as: UTF8.self) })

        // gw-a returns with the same outbox (the network is back): every kept reading arrives.
        proxy.resume()
        let restarted = Date()
        let again = try GatewayProcess(restarting: gatewayA)
        func received() -> Set<String> {
            Set(recorder.on(strap).map { String(decoding: $0.payload, as: UTF8.self) })
        }
        let delivered = await recorder.wait(timeout: .seconds(30)) { _ in keptTexts.isSubset(of: received()) }
        let missing = keptTexts.subtracting(received()).count
        #expect(delivered, "\(missing) of \(keptTexts.count) kept readings never arrived\n\(again.log.suffix(3000))")
        // Late: at least one came only after the restart (none had passed the stalled proxy).
        let arrivals = recorder.arrivals(on: strap).filter {
            keptTexts.contains(String(decoding: $0.message.payload, as: UTF8.self))
        }
        let late = arrivals.filter { $0.arrival > restarted }.count
        #expect(late > 0, "every kept reading had arrived before gw-a returned")
        let lastMs = arrivals.map(\.arrival).max().map { Int($0.timeIntervalSince(restarted) * 1000) }
        print(
            "multi-gateway no loss: \(keptTexts.count) strap readings kept in gw-a's outbox at its SIGKILL "
                + "(\(Int(killed.timeIntervalSince(paused) * 1000)) ms after the stall), \(late) delivered after its "
                + "restart, the last \(lastMs.map { "\($0) ms" } ?? "never") after it; load "
                + "\(MultiGatewayEndToEndTests.loadAverage())")

        again.process.signal(SIGTERM)
        await again.process.waitForExit(timeout: .seconds(15))
        await stop(members, recorder, broker)
    }

    private func stop(
        _ members: [String: SharedBrokerEndToEndTests.Member], _ recorder: MQTTRecorder, _ broker: MosquittoFixture
    ) async {
        for member in members.values { await member.stop() }
        await recorder.close()
        await broker.stop()
    }
}
