import Bluetooth
import Configuration
import Foundation

extension Gateway {
    /// The configuration as loaded, with the devices matches split off and the automatic devices.
    func expanded(_ configuration: BridgeConfiguration) -> BridgeConfiguration {
        autoDevices.expand(instances.expand(configuration))
    }

    /// `auto_devices`: an unconfigured advertiser at a fixed `address` that `decoder` recognises
    /// becomes a device of its own (stored, applied as a reload would); returns its id, or nil when
    /// automatic devices are off or a configured device has that id. Beyond `max_devices` the
    /// automatic device seen least recently is dropped, with its topics' entities.
    func addAutoDevice(_ address: BluetoothAddress, decoder: String) async -> String? {
        guard configured.autoDevices.enabled else { return nil }
        let now = Date()
        guard
            let (id, evicted) = autoDevices.add(
                address, decoder: decoder, at: now, maximum: configured.autoDevices.maxDevices,
                configuration: instances.expand(configured))
        else { return nil }
        if let entry = autoDevices.entries[id] { try? await state.setAutoDevice(entry, id: id) }
        logger.notice("automatic device added", [("id", id), ("address", address.string), ("decoder", decoder)])
        for gone in evicted {
            logger.notice(
                "automatic device dropped: auto_devices.max_devices reached",
                [
                    ("id", gone), ("max_devices", "\(configured.autoDevices.maxDevices)"),
                    ("evictions", "\(autoDevices.evictions)"),
                ])
        }
        await apply(expanded(configured), reason: "configuration expanded by an automatic device")
        return id
    }
}
