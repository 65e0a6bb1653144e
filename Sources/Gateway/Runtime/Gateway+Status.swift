import Bluetooth
import Foundation
import MQTT
import Publisher

/// ``ServiceStatus``: kept current from the gateway's own events (broker, adapter, device
/// availability, the health timer's outbox figures) and yielded on `statusUpdates` when it changes.
extension Gateway {
    /// Applies `change`, recounts the devices, and yields the status if it differs from the last one.
    func updateStatus(_ change: (inout ServiceStatus) -> Void = { _ in }) {
        guard !stopping else { return }
        var next = serviceStatus
        change(&next)
        next.configuredDevices = model.configuration.devices.count
        next.onlineDevices = model.configuration.devices.filter { isAvailable($0.id) }.count
        next.connectedDevices = model.configuration.devices.filter { devices[$0.id]?.connected == true }.count
        guard next != serviceStatus else { return }
        let connectionsChanged = next.connectedDevices != serviceStatus.connectedDevices
        serviceStatus = next
        statusContinuation.yield(next)
        // The gateway record's free slots (shared-broker mode).
        if connectionsChanged { refreshGatewayRecord() }
    }

    /// Reads the outbox's depth and error into the status.
    func refreshOutboxStatus() async {
        guard let stats = try? await publisher.stats() else { return }
        updateStatus(outbox: stats)
    }

    func updateStatus(outbox stats: PublisherStats) {
        updateStatus {
            $0.outboxDepth = stats.depth
            $0.outboxError = stats.storeError.map { HealthSnapshot.outboxErrorName($0.code.rawValue) }
        }
    }

    /// Every `healthInterval`: the outbox figures for the status, and `bridge/health` while connected.
    func healthTick() async {
        let stats = try? await publisher.stats()
        if let stats {
            lastPublisherStats = stats
            updateStatus(outbox: stats)
            sampleLoad(published: stats.published)
        }
        await publishHealth(stats)
    }
}
