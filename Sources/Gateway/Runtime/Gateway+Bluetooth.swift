import Foundation
import MQTT

extension Gateway {
    /// The Bluetooth side's state now (adapter, power, bluetoothd, the problem and what to do).
    public func bluetoothHealth() -> BluetoothHealth { bluetooth }

    /// Every change of ``bluetoothHealth()``, starting with the current value: for systemd's
    /// `STATUS=` (see `RunCommand`). The stream ends when the gateway stops.
    public func bluetoothHealthUpdates() -> AsyncStream<BluetoothHealth> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: BluetoothHealth.self, bufferingPolicy: .bufferingNewest(1))
        nextBluetoothWatcher += 1
        let id = nextBluetoothWatcher
        bluetoothWatchers[id] = continuation
        continuation.yield(bluetooth)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeBluetoothWatcher(id) }
        }
        return stream
    }

    private func removeBluetoothWatcher(_ id: Int) { bluetoothWatchers[id] = nil }

    func finishBluetoothWatchers() {
        for watcher in bluetoothWatchers.values { watcher.finish() }
        bluetoothWatchers.removeAll()
    }

    /// ``BLELink`` learnt something new about Bluetooth: log what to fix when it became unusable
    /// (or how it changed), tell the watchers, and publish the health at once so Home Assistant's
    /// "Bluetooth" problem sensor follows without waiting for the next interval.
    func bluetoothHealthChanged(_ health: BluetoothHealth) async {
        let previous = bluetooth
        bluetooth = health
        if health.problem != previous.problem || health.lastError != previous.lastError {
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
        for watcher in bluetoothWatchers.values { watcher.yield(health) }
        if health.problem != previous.problem { await publishHealth() }
    }
}
