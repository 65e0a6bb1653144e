import Logging
import MQTT
import Outbox

/// Moves readings from the outbox to the broker: oldest first, one at a time in order, each
/// deleted only after the broker acknowledged it (QoS 1/2). While the broker is unreachable the
/// readings stay in the outbox; the pump resumes on `wake()` (new reading, reconnection).
actor OutboxPump {
    let store: OutboxStore
    let client: MQTTClient
    let batch: Int
    private let logger = Logger(label: "outbox-pump")
    private(set) var published = 0
    private var task: Task<Void, Never>?
    private var waiter: CheckedContinuation<Void, Never>?
    private var pendingWake = false

    init(store: OutboxStore, client: MQTTClient, batch: Int) {
        self.store = store
        self.client = client
        self.batch = batch
    }

    func start() {
        guard task == nil else { return }
        task = Task { await self.run() }
    }

    func wake() {
        if let waiter {
            self.waiter = nil
            waiter.resume()
        } else {
            pendingWake = true
        }
    }

    /// Returns at the next `wake()` (or at once if one came since the last wait), or after a second.
    private func waitForWake() async {
        if pendingWake {
            pendingWake = false
            return
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: .seconds(1))
            await self?.wake()
        }
        await withCheckedContinuation { waiter = $0 }
        timer.cancel()
    }

    /// Waits until the outbox is empty, the broker is gone, or `deadline` passes.
    func drain(until deadline: ContinuousClock.Instant) async {
        while ContinuousClock.now < deadline, client.connectionState.isConnected {
            let depth = (try? await store.stats().depth) ?? 0
            if depth == 0 { return }
            wake()
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    func stop() async {
        task?.cancel()
        wake()
        await task?.value
        task = nil
    }

    private func run() async {
        while !Task.isCancelled {
            // Nothing sent: wait for a reading or a reconnection (or re-check every second).
            if await sendBatch() == 0 { await waitForWake() }
        }
    }

    /// Publishes up to `batch` records in order; returns how many were acknowledged.
    private func sendBatch() async -> Int {
        guard client.connectionState.isConnected else { return 0 }
        let records: [OutboxRecord]
        do {
            records = try await store.next(limit: batch)
        } catch {
            logger.error("outbox read failed", [("error", "\(error)")])
            return 0
        }
        var acknowledged: [Int64] = []
        for record in records {
            let entry = record.entry
            let message = MQTTMessage(
                topic: entry.topic, payload: entry.payload,
                qos: MQTTQoS(rawValue: Int32(entry.qos.rawValue)) ?? .atLeastOnce,
                retain: entry.retain)
            do {
                try await client.publish(message)
                acknowledged.append(record.id)
            } catch {
                logger.debug("publish interrupted; the reading stays in the outbox", [("error", "\(error)")])
                break
            }
        }
        if !acknowledged.isEmpty {
            do {
                try await store.remove(ids: acknowledged)
            } catch {
                logger.error("outbox delete failed (readings may be sent twice)", [("error", "\(error)")])
            }
            published += acknowledged.count
        }
        return acknowledged.count
    }
}
