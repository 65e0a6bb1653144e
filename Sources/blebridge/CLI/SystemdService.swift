import Logging
import SystemdNotify

/// systemd integration for long-running commands (`run`, `demo`): readiness, watchdog, status and
/// stopping notifications when started by systemd with `Type=notify`; does nothing otherwise.
///
/// A failed notification is logged, never thrown: it must not stop the gateway.
///
/// ```swift
/// let systemd = SystemdService.fromEnvironment()
/// try await gateway.start()
/// systemd.ready(status: "running; 5 devices configured")
/// let watchdog = systemd.startWatchdog { await gateway.isResponsive() }
/// // SIGHUP: systemd.reloading(); reload…; systemd.ready(status: …)
/// // SIGTERM: systemd.stopping(); watchdog?.cancel(); await gateway.stop()
/// ```
struct SystemdService: Sendable {
    let notifier: SystemdNotifier?
    private static let logger = Logger(label: "systemd")

    /// Reads `NOTIFY_SOCKET` / `WATCHDOG_USEC`; an unusable `NOTIFY_SOCKET` is logged and ignored.
    static func fromEnvironment() -> SystemdService {
        do {
            return SystemdService(notifier: try SystemdNotifier.fromEnvironment())
        } catch {
            logger.warning("not notifying systemd", [("error", error.description)])
            return SystemdService(notifier: nil)
        }
    }

    /// `READY=1` (plus `STATUS=`): start-up finished.
    func ready(status: String) {
        send([.ready, .status(status)])
    }

    /// `STATUS=`: the line `systemctl status` shows.
    func status(_ text: String) {
        send([.status(text)])
    }

    /// `RELOADING=1`: reloading the configuration; call ``ready(status:)`` when done.
    func reloading() {
        send([.reloading, .status("reloading the configuration")])
    }

    /// `STOPPING=1`: shutting down.
    func stopping() {
        send([.stopping, .status("stopping")])
    }

    /// Sends `WATCHDOG=1` every `WatchdogSec`/2 while `isHealthy` returns true; nil when systemd's
    /// watchdog is off. `isHealthy` should await the part of the gateway that could hang.
    func startWatchdog(isHealthy: @escaping @Sendable () async -> Bool) -> Task<Void, Never>? {
        guard let notifier, let interval = notifier.watchdogInterval else { return nil }
        Self.logger.debug("systemd watchdog on", [("interval", "\(interval)")])
        return notifier.startWatchdog(isHealthy: isHealthy)
    }

    private func send(_ states: [NotifyState]) {
        guard let notifier else { return }
        do {
            try notifier.notify(states)
        } catch {
            Self.logger.warning("systemd notification failed", [("error", error.description)])
        }
    }
}
