import Testing

@testable import Outbox

@Suite struct OutboxSynchronousModeTests {
    @Test func pragmaValuesAreSQLiteNames() {
        #expect(OutboxSynchronousMode.normal.pragmaValue == "NORMAL")
        #expect(OutboxSynchronousMode.full.pragmaValue == "FULL")
    }
}
