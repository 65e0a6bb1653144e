import BlueZ
import Bluetooth
import ByteLayouts
import Configuration
import Decoders
import Foundation
import JSON

extension BLELink {
    // MARK: Commands

    /// Executes a validated command's steps in order on the connected device.
    func execute(_ steps: [GatewayCommand], device id: String) async -> Result<JSONValue?, CommandFailure> {
        var data: [JSONMember] = []
        for step in steps {
            do {
                if let member = try await execute(step, device: id) { data.append(member) }
            } catch let failure as CommandFailure {
                return .failure(failure)
            } catch let error as BluetoothError {
                return .failure(Self.failure(error))
            } catch {
                return .failure(CommandFailure(.bleError, "\(error)"))
            }
        }
        return .success(data.isEmpty ? nil : .object(data))
    }

    /// Whether a `notify`/`indicate` subscription of the device's configuration resolves to `key`.
    private func isSubscribed(_ key: GATTAttributeID, device id: String) -> Bool {
        let subscriptions = configuration.device(id: id)?.subscribe ?? []
        return subscriptions.contains { subscription in
            guard subscription.mode != .read else { return false }
            let target = CharacteristicTarget(subscription.characteristic, service: subscription.service)
            return (try? characteristic(target, of: id))?.characteristic.id == key
        }
    }

    /// The `value_too_long` message: names the limit and, for writes without response, the way out.
    static func tooLong(_ length: Int, limit: Int, type: WriteType) -> String {
        switch type {
        case .withoutResponse:
            "\(length) bytes; a write without response carries at most \(limit) bytes on this connection "
                + "(ATT MTU \(limit + ATTLimits.headerLength) − 3); a write with response takes up to "
                + "\(ATTLimits.maximumAttributeValueLength)"
        case .withResponse:
            "\(length) bytes; a write with response carries at most \(limit) bytes (the ATT attribute limit)"
        }
    }

    static func failure(_ error: BluetoothError) -> CommandFailure {
        if let refused = refusedPairing(error) { return CommandFailure(.notPaired, refused) }
        return switch error.code {
        case .timeout, .connectionTimeout: CommandFailure(.timeout, error.description)
        case .notConnected, .peripheralDisconnected, .notPoweredOn, .connectionFailed, .unknownDevice:
            CommandFailure(.deviceUnavailable, error.description)
        case .invalidValueLength: CommandFailure(.valueTooLong, error.description)
        case .insufficientAuthentication:
            CommandFailure(
                .notPaired,
                "\(error.description); the device needs pairing and the pairing through the gateway's agent "
                    + "failed: set the device's \"passkey\" to the 6 digits it shows (or remove a stale bond "
                    + "with `bluetoothctl remove <address>`)")
        default: CommandFailure(.bleError, error.description)
        }
    }

    private func execute(_ step: GatewayCommand, device id: String) async throws -> JSONMember? {
        guard let peripheral = peripherals[id] else {
            throw CommandFailure(.deviceUnavailable, "\(id) is not connected")
        }
        switch step {
        case .write(_, let uuid, let value, let type, let name, let service):
            let entry = try characteristic(CharacteristicTarget(uuid, service: service), of: id)
            let limit = await peripheral.maximumWriteValueLength(for: type)
            guard value.count <= limit else {
                throw CommandFailure(.valueTooLong, Self.tooLong(value.count, limit: limit, type: type))
            }
            try await peripheral.writeValue(Data(value), for: entry.characteristic, type: type)
            let command = configuration.device(id: id)?.command(named: name ?? "")
            let echoed =
                command.flatMap { GatewayModel.namedCommand($0).format.decode(value) }
                ?? .string(Hex.string(value))
            return JSONMember(name ?? uuid.shortString, echoed)
        case .read(_, let uuid, let name, let service):
            let entry = try characteristic(CharacteristicTarget(uuid, service: service), of: id)
            let bytes = Array(try await peripheral.readValue(for: entry.characteristic))
            let device = configuration.device(id: id)
            let source = source(entry, device: device)
            received(
                bytes, device: id, characteristic: uuid, decoder: nil, layout: Self.layout(of: source, device: device),
                source: source, service: entry.service)
            if let name, let command = configuration.device(id: id)?.command(named: name),
                let value = GatewayModel.namedCommand(command).format.decode(bytes)
            {
                return JSONMember(name, value)
            }
            let reading = registry.decode(bytes, uuid: uuid)
            if let name, reading.isSuccess {
                let fields = reading.fields.map { JSONMember($0.name, JSONValue($0.value)) }
                return JSONMember(name, fields.count == 1 ? fields[0].value : .object(fields))
            }
            return JSONMember(name ?? "value", .string(Hex.string(bytes)))
        case .notify(_, let uuid, let enable, let service):
            let entry = try characteristic(CharacteristicTarget(uuid, service: service), of: id)
            let key = entry.characteristic.id
            // A configured subscription already streams it (decoded, and on the raw topic): raw
            // notify neither replaces nor ends it.
            guard !isSubscribed(key, device: id) else { return nil }
            if enable {
                // Already streaming: that stream goes on. A second listener beside it would deliver
                // each value twice until the first was cancelled, and cancelling first would drop
                // what arrives in between (and turn the notifications off and on again).
                if rawListeners[id]?[key] != nil, await peripheral.isNotifying(entry.characteristic) { return nil }
                let device = configuration.device(id: id)
                let source = source(entry, device: device)
                let context = ReadingPipeline.Subscription(
                    characteristic: uuid, decoder: "raw", layout: Self.layout(of: source, device: device),
                    source: source)
                let (pipeline, clock) = (self.pipeline, self.clock)
                // Held as a configured subscription's listener is: a link drop, a power-off and a
                // disconnect the gateway decides let it go, and it ends once its notify socket was
                // read to the end (issue 19: cancelling it there lost what the socket still held).
                let held = try await HeldListener.listening(
                    to: entry.characteristic, of: peripheral,
                    onValue: { value in
                        pipeline.received(value, device: id, subscription: context, sampleTime: clock.date)
                    })
                // One that ended by itself (BlueZ closed its socket), or one another request added meanwhile.
                rawListeners[id, default: [:]][key]?.listener.cancel()
                rawListeners[id, default: [:]][key] = held
            } else {
                rawListeners[id]?[key]?.listener.cancel()
                rawListeners[id]?[key] = nil
            }
            return nil
        case .connect:
            return nil
        case .disconnect:
            disconnect(id)
            return nil
        case .scan, .listDevices, .reloadConfiguration, .restart, .adopt, .removeDevice:
            return nil
        }
    }
}
