import Bluetooth
import Configuration
import Foundation
import Timekeeping

extension Gateway {
    /// An advertiser at `address` was caught by the match of `templateID` (a device whose match has
    /// no address): the id it is published under, or nil when it is refused (``MatchInstances/bound``
    /// reached with no instance idle enough to make room; its advertisement is dropped). A new
    /// fixed address after the first becomes a device of its own (``MatchInstances``), stored and
    /// applied as a reload would, announcing only what changed.
    func assignMatch(_ address: BluetoothAddress, template templateID: String, at now: Date? = nil) async -> String? {
        let now = now ?? clock.date
        guard let template = configured.device(id: templateID) else { return templateID }
        switch instances.assign(address, caughtBy: template, at: now) {
        case .template:
            return templateID
        case .instance(let id):
            return id
        case .newTemplateBinding:
            await storeBindings(of: templateID)
            return templateID
        case .refused(let id):
            if let held = instanceRefusalLog.admit(at: clock.now) {
                logger.notice(
                    "the match of a device caught another device, but it has \(MatchInstances.bound.maximum) "
                        + "already, none unseen for 10 minutes; its advertisements are dropped",
                    [
                        ("device", templateID), ("address", address.string), ("id", id),
                        ("refusals", "\(instances.refusals)"), ("held_back", "\(held)"),
                    ])
            }
            return nil
        case .idTaken(let id, let other):
            if let held = idCollisionLog.admit(at: clock.now) {
                logger.notice(
                    "the match of a device caught another device whose id belongs to another address ending in the "
                        + "same 3 bytes; its advertisements are dropped (give it a devices[] entry of its own)",
                    [
                        ("device", templateID), ("address", address.string), ("id", id), ("taken_by", other),
                        ("held_back", "\(held)"),
                    ])
            }
            return nil
        case .newInstance(let id, let evicted):
            await storeBindings(of: templateID)
            logger.notice(
                "the match of a device caught another device; it gets its own id",
                [("device", templateID), ("address", address.string), ("id", id)])
            for gone in evicted {
                logger.notice(
                    "match instance dropped to make room: unseen for 10 minutes",
                    [("device", templateID), ("id", gone), ("evictions", "\(instances.evictions)")])
            }
            await apply(
                expanded(configured), reason: "match instance added", announceAll: false,
                leaving: Dictionary(
                    uniqueKeysWithValues: evicted.map {
                        (
                            $0,
                            "dropped to make room: the match has \(MatchInstances.bound.maximum) instances, this one unseen for 10 minutes"
                        )
                    }))
            return id
        }
    }

    private func storeBindings(of templateID: String) async {
        try? await state.setMatchBindings(instances.bindings[templateID] ?? [], deviceID: templateID)
    }
}
