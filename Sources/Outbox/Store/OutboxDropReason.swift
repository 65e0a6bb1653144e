/// Why entries were dropped before delivery. The counters are persisted in the database.
package enum OutboxDropReason: String, Sendable, Hashable, CaseIterable, Codable {
    /// The queue held more than `maxMessages` entries.
    case count
    /// The queue held more than `maxBytes` bytes.
    case bytes
    /// The entry's sample time was older than `maxAge`.
    case age
    /// The broker refused the entry for good (too large, invalid topic, not authorised).
    case rejected
    /// Never stored: the outbox refused writes (full disk, lock, …) and the publisher's memory hold
    /// was full, so the oldest held reading went (counted by the publisher once writes work again).
    case held

    var counterName: String { "dropped.\(rawValue)" }
}
