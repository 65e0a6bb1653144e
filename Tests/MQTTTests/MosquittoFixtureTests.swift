import TestSupport
import Testing

@Suite struct MosquittoFixtureTests {
    /// The broker the MQTT tests rely on relays a retained message between independent clients.
    @Test func brokerRelaysARetainedMessage() async throws {
        let broker = try await MosquittoFixture()
        let published = try await ChildProcess.run(
            "mosquitto_pub",
            ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "fixture/test", "-m", "hello", "-r", "-q", "1"])
        #expect(published.status == 0, "\(published.stderr)")
        let received = try await ChildProcess.run(
            "mosquitto_sub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "fixture/test", "-C", "1", "-W", "5"])
        #expect(received.stdout == "hello\n")
        await broker.stop()
    }
}
