import Foundation

/// An entry as stored: its row id (strictly increasing in append order) and when it was appended.
package struct OutboxRecord: Sendable, Hashable, Identifiable {
    package var id: Int64
    package var entry: OutboxEntry
    package var enqueuedAt: Date

    package init(id: Int64, entry: OutboxEntry, enqueuedAt: Date) {
        self.id = id
        self.entry = entry
        self.enqueuedAt = enqueuedAt
    }
}
