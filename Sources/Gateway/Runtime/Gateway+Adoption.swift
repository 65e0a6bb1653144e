import Foundation
import JSON

extension Gateway {
    /// `bridge/request/device/adopt`: `device` (an automatic device, or an adopted one to rename or
    /// re-key) becomes `id`, named `name`, decoding with `bindKey`. Checked (``AdoptedDevices``),
    /// stored in the state database before anything changes (a failed write changes nothing), then
    /// applied as a reload would: the old id leaves (its Home Assistant entities removed, a
    /// `device_left` event saying it was adopted) and the new one is announced. The answer carries
    /// the `devices[]` entry that configures the same device in config.json.
    func adopt(_ pending: PendingCommand, device: String, as id: String, name: String?, bindKey: [UInt8]?) async {
        let transaction = pending.command.transaction
        let checked = adopted.adoption(
            of: device, as: id, name: name, bindKey: bindKey, automatic: autoDevices, running: model.configuration)
        let adoption: AdoptedDevices.Adoption
        switch checked {
        case .failure(var failure):
            counters.commandsRefused += 1
            logger.notice(
                "adoption refused", [("device", device), ("id", id), ("code", failure.code.rawValue)])
            failure.transaction = transaction
            respond(CommandResponse.error(failure), to: pending.reply)
            return
        case .success(let checked):
            adoption = checked
        }
        do {
            try await state.setAdoptedDevice(adoption.entry, id: adoption.id)
        } catch {
            respond(
                CommandResponse.error(
                    CommandFailure(
                        .internal, "the adoption could not be stored (\(error)); nothing changed",
                        transaction: transaction)), to: pending.reply)
            return
        }
        adopted.apply(adoption)
        autoDevices.remove(adoption.previousID)
        // The rows of what it was: `apply` forgets only a device that leaves the configuration, and
        // one adopted under its own id does not (its automatic row would come back at the next start).
        if adoption.previousID != adoption.id { try? await state.removeAdoptedDevice(id: adoption.previousID) }
        try? await state.removeAutoDevice(id: adoption.previousID)
        logger.notice(
            "automatic device adopted",
            [
                ("device", device), ("id", adoption.id), ("address", adoption.entry.address),
                ("decoder", adoption.entry.decoder), ("bind_key", adoption.entry.bindKey == nil ? "no" : "yes"),
            ])
        await apply(
            expanded(configured), reason: "automatic device adopted", announceAll: false,
            leaving: [adoption.previousID: "adopted as \(adoption.id)"])
        let snippet = AdoptedDevices.snippet(
            id: adoption.id, name: adoption.entry.name, address: adoption.entry.address,
            decoder: adoption.entry.decoder, bindKey: adoption.entry.bindKey)
        respond(
            CommandResponse.ok(
                transaction: transaction,
                data: .object([
                    JSONMember("id", .string(adoption.id)), JSONMember("previous_id", .string(adoption.previousID)),
                    JSONMember("address", .string(adoption.entry.address)),
                    JSONMember("decoder", .string(adoption.entry.decoder)), JSONMember("config", snippet),
                ])), to: pending.reply)
    }
}

extension Gateway {
    /// `bridge/request/device/remove`: an adopted device loses its adoption, an automatic device is
    /// forgotten (either comes back as an automatic device with its next advertisement unless
    /// `auto_devices` is off or its lists refuse it); it leaves with its Home Assistant entities
    /// and a `device_left` event. A configured device is refused (`not_allowed`).
    func removeDevice(_ pending: PendingCommand, _ id: String) async {
        let transaction = pending.command.transaction
        let kind: String
        // Its stored row goes here: `apply` forgets only a device that was in the configuration,
        // and an adoption a configured device outranks was not.
        if adopted.remove(id) {
            kind = "adopted"
            try? await state.removeAdoptedDevice(id: id)
        } else if autoDevices.entries[id] != nil {
            autoDevices.remove(id)
            kind = "automatic"
            try? await state.removeAutoDevice(id: id)
        } else {
            counters.commandsRefused += 1
            let failure =
                model.configuration.device(id: id) != nil
                ? CommandFailure(
                    .notAllowed, "\(id) is not an adopted or automatic device; remove it from the configuration file",
                    transaction: transaction)
                : CommandFailure(.unknownDevice, "no device '\(id)'", transaction: transaction)
            respond(CommandResponse.error(failure), to: pending.reply)
            return
        }
        logger.notice("\(kind) device removed over MQTT", [("id", id)])
        // The state goes with the device (GatewayStateStore.forget, in apply).
        await apply(
            expanded(configured), reason: "\(kind) device removed", announceAll: false,
            leaving: [id: "removed over MQTT (bridge/request/device/remove)"])
        respond(
            CommandResponse.ok(
                transaction: transaction,
                data: .object([JSONMember("id", .string(id)), JSONMember("was", .string(kind))])),
            to: pending.reply)
    }
}
