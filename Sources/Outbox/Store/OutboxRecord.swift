import Foundation

/// An entry as stored: its row id (strictly increasing in append order) and when it was appended.
public struct OutboxRecord: Sendable, Hashable, Identifiable {
    public var id: Int64
    public var entry: OutboxEntry
    public var enqueuedAt: Date

    public init(id: Int64, entry: OutboxEntry, enqueuedAt: Date) {
        self.id = id
        self.entry = entry
        self.enqueuedAt = enqueuedAt
    }
}
