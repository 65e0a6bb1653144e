import Bluetooth
import Configuration
import Foundation
import Timekeeping

extension Gateway {
    /// The configuration as loaded, with the devices matches split off and the automatic devices.
    /// Adopted devices come before automatic ones, whose expansion then skips their addresses.
    func expanded(_ configuration: BridgeConfiguration) -> BridgeConfiguration {
        autoDevices.expand(adopted.expand(instances.expand(configuration)))
    }

    /// `auto_devices`' bound: `max_devices`, making room only from devices unseen for `evict_after`.
    var autoDeviceBound: DeviceBound {
        DeviceBound(
            maximum: configured.autoDevices.maxDevices,
            idleAge: configured.autoDevices.evictAfter.inSeconds)
    }

    /// `auto_devices`: an unconfigured advertiser at a fixed `address` that `decoder` recognises
    /// becomes a device of its own (stored, applied as a reload would, announcing only what
    /// changed); returns its id, or nil when automatic devices are off, a configured device has
    /// that id, or the bound is reached with no device idle enough to make room (``DeviceBound``).
    /// An evicted device goes with its topics' entities.
    func addAutoDevice(
        _ address: BluetoothAddress, decoder: String, name: String? = nil, at now: Date? = nil
    ) async -> String? {
        let now = now ?? clock.date
        guard configured.autoDevices.enabled else { return nil }
        let known = AutoDevices.id(decoder: decoder, address: address)
        let unnamed = autoDevices.entries[known].map { $0.name == nil } ?? false
        let admission = autoDevices.add(
            address, decoder: decoder, name: name, at: now, bound: autoDeviceBound,
            configuration: instances.expand(configured))
        if unnamed, let entry = autoDevices.entries[known], entry.name != nil {
            // Its name is heard for the first time: stored, and judged by the name lists now.
            try? await state.setAutoDevice(entry, id: known)
            let lists = configured.autoDevices
            if !lists.allow.names.isEmpty || !lists.deny.names.isEmpty {
                await apply(
                    expanded(configured), reason: "automatic device's advertised name heard", announceAll: false,
                    leaving: [known: "its advertised name is refused by auto_devices.allow or deny"])
            }
        }
        switch admission {
        case nil, .filtered:
            return nil
        case .known(let id):
            return id
        case .refused(let id):
            if let held = autoDeviceRefusalLog.admit(at: clock.now) {
                logger.notice(
                    "automatic device not added: auto_devices.max_devices reached and none unseen for evict_after",
                    [
                        ("id", id), ("max_devices", "\(configured.autoDevices.maxDevices)"),
                        ("evict_after", DurationParser.format(configured.autoDevices.evictAfter)),
                        ("refusals", "\(autoDevices.refusals)"), ("held_back", "\(held)"),
                    ])
            }
            return nil
        case .idTaken(let id, let other):
            if let held = idCollisionLog.admit(at: clock.now) {
                logger.notice(
                    "automatic device not added: its id belongs to another address ending in the same 3 bytes; "
                        + "configure it in devices[] to follow it",
                    [("id", id), ("address", address.string), ("taken_by", other), ("held_back", "\(held)")])
            }
            return nil
        case .added(let id, let evicted):
            if let entry = autoDevices.entries[id] { try? await state.setAutoDevice(entry, id: id) }
            logger.notice("automatic device added", [("id", id), ("address", address.string), ("decoder", decoder)])
            for gone in evicted {
                logger.notice(
                    "automatic device dropped: auto_devices.max_devices reached and it was unseen for evict_after",
                    [
                        ("id", gone), ("max_devices", "\(configured.autoDevices.maxDevices)"),
                        ("evictions", "\(autoDevices.evictions)"),
                    ])
            }
            await apply(
                expanded(configured), reason: "configuration expanded by an automatic device", announceAll: false,
                leaving: Dictionary(
                    uniqueKeysWithValues: evicted.map {
                        ($0, "dropped to make room: auto_devices.max_devices reached and unseen for evict_after")
                    }))
            return id
        }
    }
}
