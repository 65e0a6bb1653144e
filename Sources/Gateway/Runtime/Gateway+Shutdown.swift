import Logging
import MQTT
import TaskScope
import Timekeeping

/// The last moments of a shutdown: commands that arrive after the response queue has closed are
/// still answered. The broker acknowledges a command to its sender whether or not the gateway
/// answers, and the gateway's client acknowledges each one it receives, so the broker will not
/// send it again: every command received before DISCONNECT gets its answer here.
extension Gateway {
    /// Publishes the answers decided since the queue closed on the gateway's connection, until
    /// none is left (more may arrive meanwhile) or `deadline`; the rest wait for
    /// ``answerOverASecondConnection()``.
    func publishLateResponses(until deadline: ContinuousClock.Instant) async {
        while !lateResponses.isEmpty, client.connectionState.isConnected, ContinuousClock.now < deadline {
            let batch = lateResponses
            lateResponses = []
            let failed = await Self.publish(batch, with: client, until: deadline)
            lateResponses = failed + lateResponses
            if !failed.isEmpty { break }
        }
    }

    /// Returns once no command is in flight, or when the calling task is cancelled (one caller:
    /// the stop).
    func commandsFinished() async {
        guard commandsInFlight > 0 else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if commandsInFlight == 0 || Task.isCancelled {
                    continuation.resume()
                } else {
                    commandWaiter = continuation
                }
            }
        } onCancel: {
            Task { await self.resumeCommandWaiter() }
        }
    }

    func resumeCommandWaiter() {
        commandWaiter?.resume()
        commandWaiter = nil
    }

    /// Lets the command tasks answer what the client received before DISCONNECT (the streams end
    /// once the client has stopped, after delivering it); waits until `deadline` at most.
    func finishCommandStreams(until deadline: ContinuousClock.Instant) async {
        let tasks = Array(commandTasks.values)
        commandTasks = [:]
        for task in tasks { await task.finished(cancellingAt: deadline) }
    }

    /// Answers still unpublished after DISCONNECT (their commands were received while it was
    /// going out) leave over a short second connection: clean session, no will, client id
    /// `<client_id>-shutdown`, so the gateway's own session (and the commands the broker queues
    /// in it for the next start) is left alone.
    func answerOverASecondConnection() async {
        guard !lateResponses.isEmpty else { return }
        let messages = lateResponses
        lateResponses = []
        var configuration = client.configuration
        if !configuration.clientID.isEmpty { configuration.clientID += "-shutdown" }
        configuration.cleanSession = true
        configuration.will = nil
        configuration.connectTimeout = .seconds(5)
        let second = MQTTClient(configuration: configuration)
        do {
            try await second.connect()
        } catch {
            logger.warning(
                "commands received while disconnecting were not answered: no second connection",
                [("count", "\(messages.count)"), ("error", "\(error)")])
            return
        }
        let failed = await Self.publish(messages, with: second, until: .now + .seconds(5))
        await second.disconnect()
        if failed.isEmpty {
            logger.info(
                "answered commands received while disconnecting over a second connection",
                [("count", "\(messages.count)")])
        } else {
            logger.warning(
                "answers to commands received while disconnecting not published",
                [("count", "\(failed.count)"), ("topics", Set(failed.map(\.topic)).sorted().joined(separator: ","))])
        }
    }

    /// How long the late answers wait for the next acknowledgement once their deadline has passed
    /// (``publish(_:with:until:)``).
    static let lateAnswerPatience: Duration = .seconds(2)

    /// Publishes `messages` in order, up to ``AnswerLane/window`` of them awaiting their PUBACK at
    /// once (as the answer lanes do), until `deadline` and past it for as long as the broker keeps
    /// acknowledging: it gives up once ``lateAnswerPatience`` has passed after the deadline with
    /// no acknowledgement (a frozen or half-open broker), or when the calling task is cancelled.
    /// Returns those not acknowledged, in order. (One per round trip within a fixed 5 s left 3,093
    /// answers unsent on a slow gateway: the gateway under ThreadSanitizer.)
    static func publish(
        _ messages: [MQTTMessage], with client: MQTTClient, until deadline: ContinuousClock.Instant
    ) async -> [MQTTMessage] {
        let (events, report) = AsyncStream.makeStream(of: LateAnswerEvent.self)
        let start = ContinuousClock.now
        var timer = Deadline.after(max(.zero, deadline - start)) { report.yield(.timeUp(due: max(deadline, start))) }
        defer { timer.cancel() }
        var unacknowledged = Set(messages.indices)
        var next = messages.startIndex
        var awaiting = 0
        var patience = LateAnswerPatience(patience: lateAnswerPatience, start: start)
        var iterator = events.makeAsyncIterator()
        publishing: while next < messages.endIndex || awaiting > 0 {
            while awaiting < AnswerLane.window, next < messages.endIndex {
                let index = next
                next += 1
                do {
                    try client.publish(messages[index]) { outcome in
                        report.yield(.outcome(index, acknowledged: (try? outcome.get()) != nil))
                    }
                    awaiting += 1
                } catch {
                    // Refused at once (not connected): stays unacknowledged.
                }
            }
            guard awaiting > 0, let event = await iterator.next() else { break publishing }
            switch event {
            case .outcome(let index, let acknowledged):
                awaiting -= 1
                if acknowledged {
                    unacknowledged.remove(index)
                    patience.acknowledged(at: .now)
                }
            case .timeUp(let due):
                let now = ContinuousClock.now
                guard case .wait(let until) = patience.timerFired(due: due, at: now) else { break publishing }
                timer = Deadline.after(until - now) { report.yield(.timeUp(due: until)) }
            }
        }
        report.finish()
        if !unacknowledged.isEmpty {
            // Says whether this process was itself stalled (timers late) when it gave up.
            Logger(label: "gateway").info(
                "stopped waiting for the broker to acknowledge answers",
                [
                    ("unacknowledged", "\(unacknowledged.count)"), ("stalls", "\(patience.stalls)"),
                    ("largest_timer_delay", "\(patience.largestLateness)"),
                ])
        }
        return unacknowledged.sorted().map { messages[$0] }
    }

    /// What ``publish(_:with:until:)`` waits for: a publish's outcome (from the client's network
    /// thread), or its deadline.
    enum LateAnswerEvent: Sendable {
        case outcome(Int, acknowledged: Bool)
        /// The timer due at `due` fired.
        case timeUp(due: ContinuousClock.Instant)
    }
}
