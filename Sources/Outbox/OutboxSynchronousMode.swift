/// SQLite `PRAGMA synchronous` for the outbox database.
///
/// `normal` (the default) is durable across a process crash in WAL mode; `full` also
/// survives power loss at a large cost in write throughput.
package enum OutboxSynchronousMode: String, Sendable, Hashable, CaseIterable, Codable {
    case normal
    case full

    var pragmaValue: String { rawValue.uppercased() }
}
