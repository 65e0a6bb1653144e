import Foundation
import TestSupport
import Testing

/// Issue 19 D5: SIGABRT (systemd's watchdog signal), SIGSEGV, SIGBUS and SIGQUIT sent from
/// outside end the real binary by that signal, without Swift's `*** Program crashed ***` banner;
/// Swift's crash handler used to print it with a backtrace and return, leaving the gateway running.
@Suite(.serialized) struct FatalSignalTests {
    @Test(arguments: [SIGABRT, SIGSEGV, SIGBUS, SIGQUIT])
    func aFatalSignalFromOutsideEndsTheGateway(_ number: Int32) async throws {
        // No core files from the test (the child inherits the soft limit).
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
        limit.rlim_cur = 0
        setrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
        let bus = try await DBusDaemonFixture()
        let broker = try await MosquittoFixture()
        let gateway = try GatewayProcess(brokerURL: broker.url, busAddress: bus.address)
        let started = await gateway.process.waitForOutput(timeout: .seconds(30), stream: \.standardError) {
            $0.contains("MQTT connected")
        }
        #expect(started, "log: \(gateway.log.suffix(2000))")
        gateway.process.signal(number)
        let status = await gateway.process.waitForExit(timeout: .seconds(10))
        #expect(
            status == number,
            "still running or exited otherwise (\(String(describing: status))); log: \(gateway.log.suffix(1500))")
        if status == nil { await gateway.process.stop() }
        // Nor did the signal reach Swift's backtracer, which prints this banner (and a backtrace
        // that says the gateway crashed) before it returns.
        #expect(!gateway.log.contains("Program crashed"), "log: \(gateway.log.suffix(1500))")
        await broker.stop()
        await bus.stop()
    }
}
