import Gateway
import SystemdNotify

/// Sends `STATUS=` to systemd for each change of the gateway's ``ServiceStatus``: event driven (the
/// gateway yields only on change), at most one notification per `minimumInterval` (the stream keeps
/// only the newest status, so a burst of changes ends in one notification of the latest). Ends
/// with the stream (the gateway stops) or when its task is cancelled.
func forwardStatus<C: Clock>(
    _ updates: AsyncStream<ServiceStatus>, to notifier: SystemdNotifier, minimumInterval: Duration = .seconds(1),
    clock: C
) async where C.Duration == Duration {
    var last: String?
    for await status in updates {
        let text = status.text
        guard text != last else { continue }
        try? notifier.notify(.status(text))
        last = text
        do {
            try await clock.sleep(for: minimumInterval)
        } catch {
            return
        }
    }
}
