import Foundation
import MQTT

extension Gateway {
    /// ``BLELink`` learnt something new about Bluetooth: log what to fix when it became unusable
    /// (or how it changed), update systemd's `STATUS=` (``ServiceStatus``), and publish the health
    /// at once so Home Assistant's "Bluetooth" problem sensor follows without waiting for the next
    /// interval.
    ///
    /// The health message carries the outbox figures of the last tick: reading them anew waits for
    /// the outbox thread (behind appends, which a slow disk or SQLite's busy handler can hold for
    /// seconds), and ``BLELink`` handles Bluetooth's changes one at a time, awaiting this, so the
    /// next change (the adapter gone after its power went off) waited too (issue 20).
    func bluetoothHealthChanged(_ health: BluetoothHealth) async {
        let previous = bluetooth
        bluetooth = health
        if health.problem != previous.problem || health.lastErrorKind != previous.lastErrorKind {
            if let advice = health.advice {
                logger.error(
                    "Bluetooth unavailable: \(advice)",
                    [
                        ("problem", health.problem?.rawValue ?? ""), ("adapter", health.adapter),
                        ("error", health.lastError ?? ""),
                    ])
            } else if health.isAvailable, !previous.isAvailable {
                logger.info(
                    "Bluetooth available", [("adapter", health.adapter), ("bluetoothd", health.bluezOwner ?? "")])
            }
        }
        updateStatus { $0.bluetooth = health }
        if health.problem != previous.problem { await publishHealth(lastPublisherStats) }
    }
}
