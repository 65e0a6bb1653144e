import TestSupport
import Testing

@testable import Gateway

/// SIGTERM during the start (issue 19, D4): `blebridge run` calls `stop()` while `run()`'s start may
/// still be suspended (reading the state database, subscribing). A start that resumes after the
/// stop must not go on to connect the MQTT client again or open Bluetooth: a Bluetooth link made
/// then connects devices nobody stops (a connect in flight at exit leaves the device connected to
/// nobody, see `BLELink.stop(until:)`). Here the stop runs entirely before the start resumes, the
/// extreme case of that interleaving.
@Suite struct GatewayStopDuringStartTests {
    @Test func aStartThatResumesAfterTheStopOpensNeitherMQTTNorBluetooth() async throws {
        let directory = try TemporaryDirectory(prefix: "stop-during-start")
        let gateway = try await unstartedGateway(in: directory)
        await gateway.stop()
        // The run's start finds the gateway stopped; the run returns, as its scope is closed.
        let outcome = Recorded<String>()
        await gateway.run { result in outcome.append((try? result.get()) != nil ? "started" : "failed") }
        #expect(outcome.all == ["started"])
        #expect(await gateway.ble == nil, "Bluetooth was opened by a start after the stop")
        let state = await gateway.client.connectionState
        #expect(state == .disconnected(reason: nil), "the MQTT client was started again after the stop: \(state)")
        // Nor did it start a task: the stop closed the gateway's scope, which takes no more work.
        #expect(gateway.allTasksEnded)
        #expect(await gateway.tasks.isEmpty)
    }
}
