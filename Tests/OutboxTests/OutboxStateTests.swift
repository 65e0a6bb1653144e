import TestSupport
import Testing
import Timekeeping

@testable import Outbox

@Suite struct OutboxStateTests {
    @Test func keyValueStateSurvivesReopenAndIsFoundByPrefix() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        do {
            let store = try await OutboxStore(path: path)
            try await store.setStateValue([1], forKey: "peripheral/ä1")
            try await store.setStateValue([2], forKey: "peripheral/b")
            try await store.setStateValue([3], forKey: "discovery/x")
            try await store.setStateValue([4], forKey: "peripheral/b")
            try await store.removeStateValue(forKey: "discovery/x")
        }
        let store = try await OutboxStore(path: path)
        #expect(try await store.stateValue(forKey: "peripheral/b") == [4])
        #expect(try await store.stateValue(forKey: "discovery/x") == nil)
        let rows = try await store.stateValues(prefix: "peripheral/ä")
        #expect(rows.map(\.key) == ["peripheral/ä1"])
        #expect(try await store.stateValues(prefix: "peripheral/").count == 2)
    }

    /// A state row's change time is the store's clock's date, not a `Date()` of its own.
    @Test func aChangeIsTimedByTheStoresClock() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        let clock = ManualClock()
        clock.advance(by: .seconds(86_400 * 365))  // a year ahead: no real time can match it
        let store = try await OutboxStore(path: path, clock: clock)
        try await store.setStateValue([1], forKey: "peripheral/a")
        let updated = try SQLiteConnection(path: path).texts("SELECT CAST(updated AS TEXT) FROM kv_state")
        let seconds = try #require(updated.first.flatMap(Double.init))
        #expect(abs(seconds - clock.date.timeIntervalSince1970) < 0.001, "\(updated)")
    }
}
