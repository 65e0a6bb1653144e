import Foundation
import TestSupport
import Testing

/// `bridge/request/restart` re-executes the process. Between the old process's last use of its
/// signal handling and the new one's `SignalEvents` a SIGHUP (`systemctl reload blebridge`) must
/// not kill the gateway: systemd counts a death by SIGHUP as a clean exit, so under
/// `Restart=on-failure` the gateway would stay down.
@Suite(.serialized) struct RestartSignalTests {
    @Test func aSighupDuringTheRestartDoesNotKillTheGateway() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/bridge/#")
        let gateway = try GatewayProcess(brokerURL: broker.url)
        #expect(
            await recorder.first(on: "blebridge/bridge/state", timeout: .seconds(30)) { $0.text.contains("online") }
                != nil, "log: \(gateway.log.suffix(2000))")
        try await recorder.publish("blebridge/bridge/request/restart", "")
        #expect(await recorder.first(on: "blebridge/bridge/response/restart", timeout: .seconds(20)) != nil)
        // SIGHUP every half millisecond from the answer until the restarted process runs, so one
        // lands in the moment between exec and the new process's signal handling.
        let clock = ContinuousClock()
        let until = clock.now + .seconds(30)
        var sent = 0
        func restarted() -> Bool { gateway.log.components(separatedBy: "gateway running").count >= 3 }
        while gateway.process.isRunning, !restarted(), clock.now < until {
            gateway.process.signal(SIGHUP)
            sent += 1
            // Paces the signals (not synchronisation: the loop ends on the log line or the deadline).
            try await Task.sleep(for: .microseconds(500))
        }
        #expect(
            gateway.process.isRunning,
            "the gateway died during the restart after \(sent) SIGHUPs; log: \(gateway.log.suffix(2000))")
        #expect(restarted(), "log: \(gateway.log.suffix(2000))\nthreads: \(gateway.process.threadReport)")
        print("restart: \(sent) SIGHUPs sent until the restarted gateway ran")
        gateway.process.signal(SIGTERM)
        _ = await gateway.process.waitForExit(timeout: .seconds(15))
        await recorder.close()
        await broker.stop()
    }
}
