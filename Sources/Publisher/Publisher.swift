import Foundation
import Logging
import MQTT
import Outbox

/// Joins the outbox and the MQTT client: readings are stored first, then published, and deleted
/// only when the broker acknowledged them.
///
/// ```swift
/// let store = try await OutboxStore(path: "blebridge.sqlite")
/// let publisher = Publisher(store: store, client: client, options: PublisherOptions(window: 64))
/// await publisher.start()
/// try await publisher.submit(OutboxEntry(topic: "blebridge/hr_strap", payload: json, stream: "hr_strap"))
/// ```
///
/// - ``submit(_:)-(OutboxEntry)`` returns once the reading is committed to the outbox; it never waits for
///   the broker, so BLE work continues while the broker is down and the outbox grows.
/// - At most ``PublisherOptions/window`` publishes await acknowledgement. Rows are sent in
///   outbox order over one connection, so each stream (device) keeps its order.
/// - While disconnected nothing is sent; publishes already sent are kept by the MQTT client and
///   re-sent after the reconnect, then the backlog follows in order at full window, with new
///   readings queued behind it. A publish that fails for connection reasons restarts the window
///   from the oldest unacknowledged row (at-least-once: the broker may see a reading twice,
///   never out of order and never not at all).
/// - A reading the broker refuses for good is dropped and counted (reason `rejected`).
///
/// The flow control itself is ``PublishWindow``, a pure state machine; this actor only performs
/// its actions.
public actor Publisher {
    public nonisolated let store: OutboxStore
    public nonisolated let client: MQTTClient
    public nonisolated let options: PublisherOptions
    private let logger: Logger
    private var window: PublishWindow
    private var watcher: Task<Void, Never>?
    private var ticker: Task<Void, Never>?
    private var published = 0
    private var pendingSubmits: [PendingSubmit] = []
    private var storeError: OutboxError?
    private var committing = false
    private let clock = ContinuousClock()
    private let sampleTimeProperty: String?

    public init(
        store: OutboxStore, client: MQTTClient, options: PublisherOptions = PublisherOptions(),
        logger: Logger = Logger(label: "publisher")
    ) {
        self.store = store
        self.client = client
        self.options = options
        self.logger = logger
        self.window = PublishWindow(capacity: options.window, stallTimeout: options.stallTimeout)
        // MQTT 3.1.1 has no properties: sending one would make every publish fail (and every
        // reading be dropped as refused), so the sample-time property is left out there.
        self.sampleTimeProperty =
            client.configuration.protocolVersion == .v5 ? options.sampleTimeProperty : nil
        if let name = options.sampleTimeProperty, client.configuration.protocolVersion != .v5 {
            logger.warning(
                "sample-time user property needs MQTT 5; publishing without it",
                [("property", name), ("protocol", client.configuration.protocolVersion.rawValue)])
        }
    }

    /// Starts following the client's connection state and publishing whenever it is connected.
    /// Start (or connect) the client separately.
    public func start() {
        guard watcher == nil else { return }
        let states = client.connectionStates
        // Weak: a publisher nobody holds any more stops by itself.
        watcher = Task { [weak self] in
            for await state in states {
                guard let self else { return }
                await self.connectionChanged(state)
            }
        }
        ticker = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let self else { return }
                await self.tick()
            }
        }
    }

    /// Stops publishing new rows and waits (up to `drainTimeout`) for those in flight to be
    /// acknowledged and deleted. Whatever is not acknowledged stays in the outbox.
    public func stop(drainTimeout: Duration = .seconds(5)) async {
        watcher?.cancel()
        watcher = nil
        ticker?.cancel()
        ticker = nil
        perform(window.connectionChanged(connected: false, now: clock.now))
        let deadline = clock.now + drainTimeout
        while !window.isIdle && clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Commits `entry` to the outbox, then lets the publisher send it when it can.
    public func submit(_ entry: OutboxEntry) async throws(OutboxError) {
        try await submit([entry])
    }

    /// Commits `entries` to the outbox in one transaction, then lets the publisher send them.
    ///
    /// Submits that arrive while a commit is under way are committed together in the next
    /// transaction (group commit), so many devices submitting at once cost one transaction per
    /// round, not one each. A failing group is retried submit by submit, so one bad entry fails
    /// only its own submit.
    public func submit(_ entries: [OutboxEntry]) async throws(OutboxError) {
        guard !committing else {
            // Another commit is running: join the next group.
            let result = await withCheckedContinuation { continuation in
                pendingSubmits.append(PendingSubmit(entries: entries, continuation: continuation))
            }
            return try result.get()
        }
        // Nobody is committing: commit inline (no extra hop for a lone producer).
        committing = true
        let result: Result<Void, OutboxError>
        do {
            try await store.append(entries)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        noteStoreResult(result)
        perform(window.appended())
        if pendingSubmits.isEmpty {
            committing = false
        } else {
            Task { await self.commitPendingSubmits() }
        }
        try result.get()
    }

    private struct PendingSubmit {
        let entries: [OutboxEntry]
        let continuation: CheckedContinuation<Result<Void, OutboxError>, Never>
    }

    private func commitPendingSubmits() async {
        while !pendingSubmits.isEmpty {
            let group = pendingSubmits
            pendingSubmits = []
            do {
                try await store.append(group.flatMap(\.entries))
                noteStoreResult(.success(()))
                for submit in group { submit.continuation.resume(returning: .success(())) }
            } catch {
                noteStoreResult(.failure(error))
                if group.count == 1 {
                    group[0].continuation.resume(returning: .failure(error))
                } else {
                    for submit in group {
                        do {
                            try await store.append(submit.entries)
                            submit.continuation.resume(returning: .success(()))
                        } catch {
                            submit.continuation.resume(returning: .failure(error))
                        }
                    }
                }
            }
            perform(window.appended())
        }
        committing = false
    }

    public func stats() async throws(OutboxError) -> PublisherStats {
        PublisherStats(
            outbox: try await store.stats(), published: published, inFlight: window.inFlight.count,
            connected: window.connected, storeError: storeError)
    }

    /// Remembers whether the outbox accepts writes (for the health report); logs each change.
    private func noteStoreResult(_ result: Result<Void, OutboxError>) {
        switch result {
        case .success:
            if let previous = storeError {
                logger.notice("outbox accepts readings again", [("after", previous.code.rawValue)])
            }
            storeError = nil
        case .failure(let error):
            if storeError?.code != error.code {
                logger.error(
                    "outbox refused readings", [("code", error.code.rawValue), ("error", error.message)])
            }
            storeError = error
        }
    }

    // MARK: - Driving the window

    private func tick() {
        perform(window.tick(now: clock.now))
    }

    private func connectionChanged(_ state: MQTTConnectionState) {
        perform(window.connectionChanged(connected: state.isConnected, now: clock.now))
    }

    private func perform(_ actions: [PublishWindow.Action]) {
        for action in actions {
            switch action {
            case .fetch(let after, let limit, let read):
                Task { await self.fetch(after: after, limit: limit, read: read) }
            case .publish(let records, let generation):
                // A publish that fails at once (not connected) restarts the generation inside
                // `send`; the rest of this batch must not go out, or a record sent after a quick
                // reconnect would reach the broker ahead of the failed one's replay.
                for record in records {
                    guard generation == window.generation else { break }
                    send(record, generation: generation)
                }
            case .remove(let ids):
                Task { await self.remove(ids) }
            case .discard(let ids):
                Task { await self.discard(ids) }
            case .resumeLater:
                let delay = options.retryDelay
                Task {
                    try? await Task.sleep(for: delay)
                    self.perform(self.window.resume())
                }
            }
        }
    }

    private func fetch(after: Int64, limit: Int, read: Int) async {
        do {
            let records = try await store.next(after: after, limit: limit)
            perform(window.fetched(records, limit: limit, read: read, now: clock.now))
        } catch {
            logger.error("reading the outbox failed; retrying", [("error", "\(error)")])
            storeError = error
            perform(window.fetchFailed(read: read))
        }
    }

    /// Hands `record` to the client *now*, so the client sees publishes in outbox order:
    /// `Task.immediate` runs up to the client's `publish` (which queues the packet with
    /// libmosquitto before it first suspends) before the next record is sent.
    private func send(_ record: OutboxRecord, generation: Int) {
        let message = self.message(for: record)
        let client = self.client
        Task.immediate {
            do {
                try await client.publish(message)
                self.published += 1
                self.perform(self.window.acknowledged(record.id, generation: generation, now: self.clock.now))
            } catch {
                self.publishFailed(record, generation: generation, error: error)
            }
        }
    }

    private func publishFailed(_ record: OutboxRecord, generation: Int, error: any Error) {
        if let error = error as? MQTTError, Self.isPermanent(error) {
            logger.error(
                "broker refused a reading; dropping it",
                [("topic", record.entry.topic), ("stream", record.entry.stream), ("error", error.message)])
            perform(window.failedPermanently(record.id, generation: generation))
        } else {
            if generation == window.generation {
                logger.debug(
                    "publish failed; resending from the oldest unacknowledged reading", [("error", "\(error)")])
            }
            perform(window.failedTransiently(record.id, generation: generation))
        }
    }

    private func remove(_ ids: [Int64]) async {
        do {
            try await store.remove(ids: ids)
            storeError = nil
            perform(window.removed(ids))
        } catch {
            logger.error("deleting acknowledged readings failed; retrying", [("error", "\(error)")])
            storeError = error
            perform(window.removeFailed(ids))
        }
    }

    private func discard(_ ids: [Int64]) async {
        do {
            try await store.drop(ids: ids, reason: .rejected)
        } catch {
            logger.error("dropping refused readings failed", [("error", "\(error)")])
        }
        perform(window.discarded(ids))
    }

    // MARK: - Messages

    private func message(for record: OutboxRecord) -> MQTTMessage {
        var properties = MQTTProperties()
        if let name = sampleTimeProperty {
            properties.userProperties.append(MQTTUserProperty(name, Self.iso8601(record.entry.sampleTime)))
        }
        return MQTTMessage(
            topic: record.entry.topic, payload: record.entry.payload, qos: MQTTQoS(record.entry.qos),
            retain: record.entry.retain, properties: properties)
    }

    /// The sample time as carried in the user property: ISO 8601, UTC, rounded to the millisecond.
    public nonisolated static func iso8601(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        return Date(timeIntervalSince1970: milliseconds / 1000).formatted(
            Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// Failures that will repeat however often the row is sent.
    static func isPermanent(_ error: MQTTError) -> Bool {
        switch error.code {
        case .payloadTooLarge, .invalidTopic, .notAuthorized, .rejected, .qosNotSupported, .unsupported: true
        default: false
        }
    }
}

extension MQTTQoS {
    init(_ qos: OutboxQoS) {
        switch qos {
        case .atMostOnce: self = .atMostOnce
        case .atLeastOnce: self = .atLeastOnce
        case .exactlyOnce: self = .exactlyOnce
        }
    }
}
