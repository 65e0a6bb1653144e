import Foundation
import TestSupport
import Testing

/// `blebridge run` under a harness playing systemd's notify socket: READY, WATCHDOG pings,
/// RELOADING/READY around SIGHUP, STOPPING and a clean exit on SIGTERM.
@Suite struct SystemdNotifyRunTests {
    @Test func readinessWatchdogReloadAndStop() async throws {
        let broker = try await MosquittoFixture()
        let socket = try NotifySocketFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/bridge/state")
        let gateway = try GatewayProcess(brokerURL: broker.url, environment: socket.environment(watchdog: .seconds(1)))
        #expect(await socket.waitForMessage { $0.contains("READY=1") }, "log: \(gateway.log)")
        // WATCHDOG_USEC=1 s: pings every half second while the gateway actor answers.
        #expect(
            await socket.waitForMessage(timeout: .seconds(5)) { _ in
                socket.messages.filter { $0.contains("WATCHDOG=1") }.count >= 3
            })
        gateway.process.signal(SIGHUP)
        #expect(await socket.waitForMessage { $0.contains("RELOADING=1") })
        #expect(
            await socket.waitForMessage { _ in
                socket.messages.filter { $0.contains("READY=1") }.count >= 2
            })
        gateway.process.signal(SIGTERM)
        #expect(await socket.waitForMessage { $0.contains("STOPPING=1") })
        #expect(await gateway.process.waitForExit(timeout: .seconds(15)) == 0)
        #expect(await recorder.first(on: "blebridge/bridge/state") { $0.text.contains("offline") } != nil)
        await recorder.close()
        await broker.stop()
    }

    /// `bridge/request/restart` under systemd: a reload to systemd (RELOADING, then READY from the
    /// same PID once restarted, never STOPPING), watchdog pings go on, and SIGTERM still stops
    /// the restarted process cleanly.
    @Test func aRestartOverMQTTIsAReloadToSystemdAndSignalsStillWork() async throws {
        let broker = try await MosquittoFixture()
        let socket = try NotifySocketFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/bridge/#")
        let gateway = try GatewayProcess(brokerURL: broker.url, environment: socket.environment(watchdog: .seconds(1)))
        #expect(await socket.waitForMessage { $0.contains("READY=1") }, "log: \(gateway.log)")
        #expect(await recorder.first(on: "blebridge/bridge/state") { $0.text.contains("online") } != nil)
        let pid = gateway.process.processIdentifier
        try await recorder.publish("blebridge/bridge/request/restart", "")
        let answer = await recorder.first(on: "blebridge/bridge/response/restart", timeout: .seconds(20))
        #expect(answer?.text == #"{"status":"ok"}"#)
        #expect(await socket.waitForMessage { $0.contains("RELOADING=1") })
        #expect(
            await socket.waitForMessage(timeout: .seconds(20)) { _ in
                socket.messages.filter { $0.contains("READY=1") }.count >= 2
            }, "log: \(gateway.log)")
        #expect(gateway.process.processIdentifier == pid)
        #expect(!socket.messages.contains { $0.contains("STOPPING=1") })
        let pings = socket.messages.filter { $0.contains("WATCHDOG=1") }.count
        #expect(
            await socket.waitForMessage(timeout: .seconds(5)) { _ in
                socket.messages.filter { $0.contains("WATCHDOG=1") }.count >= pings + 2
            })
        gateway.process.signal(SIGTERM)
        #expect(await gateway.process.waitForExit(timeout: .seconds(15)) == 0, "log: \(gateway.log)")
        await recorder.close()
        await broker.stop()
    }
}
