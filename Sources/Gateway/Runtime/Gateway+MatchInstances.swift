import Bluetooth
import Configuration

extension Gateway {
    /// An advertiser at `address` was caught by the match of `templateID` (a device whose match has
    /// no address): the id it is published under. A new fixed address after the first becomes a
    /// device of its own (``MatchInstances``), stored and applied as a reload would.
    func assignMatch(_ address: BluetoothAddress, template templateID: String) async -> String {
        guard let template = configured.device(id: templateID) else { return templateID }
        switch instances.assign(address, caughtBy: template) {
        case .template:
            return templateID
        case .instance(let id):
            return id
        case .newTemplateBinding:
            await storeBindings(of: templateID)
            return templateID
        case .newInstance(let id):
            await storeBindings(of: templateID)
            logger.notice(
                "the match of a device caught another device; it gets its own id",
                [("device", templateID), ("address", address.string), ("id", id)])
            await apply(expanded(configured), reason: "match instance added")
            return id
        }
    }

    private func storeBindings(of templateID: String) async {
        try? await state.setMatchBindings(instances.bindings[templateID] ?? [], deviceID: templateID)
    }
}
