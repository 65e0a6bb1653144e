import Bluetooth
import Configuration
import JSON

/// Automatic devices a client adopted over MQTT (`bridge/request/device/adopt`): each under an id
/// and name of the client's choosing, with a bind key if given. They are kept in the gateway's
/// state (`adopted-devices/<id>`, beside the outbox), not written into config.json, and are
/// devices as configured ones are: passive, matched by address, decoded by the decoder that
/// recognised them, whether `auto_devices` is on or not. A configured device always wins: an
/// adopted device whose id or address config.json has is left out. Pure; the gateway stores
/// ``entries`` and applies ``expand(_:)``.
package struct AdoptedDevices: Sendable, Equatable {
    package struct Entry: Sendable, Equatable {
        package var address: String
        package var decoder: String
        package var name: String
        /// Nil: the key `auto_devices.bind_keys` has for the address, if any.
        package var bindKey: [UInt8]?

        package init(address: String, decoder: String, name: String, bindKey: [UInt8]? = nil) {
            self.address = address
            self.decoder = decoder
            self.name = name
            self.bindKey = bindKey
        }
    }

    /// By id.
    package private(set) var entries: [String: Entry]

    package init(entries: [String: Entry] = [:]) {
        self.entries = entries
    }

    /// An adoption to carry out: the new entry, and the id the device had until now (an automatic
    /// or adopted device) which goes away.
    package struct Adoption: Sendable, Equatable {
        package var id: String
        package var entry: Entry
        package var previousID: String
    }

    /// Checks adopting `device` (an automatic device in `automatic`, or an adopted one, to rename
    /// or re-key it) as `id`, named `name` (default: the id), with `bindKey` (default: the one it
    /// has). `running` is the configuration as expanded now (every device the gateway publishes).
    package func adoption(
        of device: String, as id: String, name: String?, bindKey: [UInt8]?, automatic: AutoDevices,
        running: BridgeConfiguration
    ) -> Result<Adoption, CommandFailure> {
        let source: Entry
        if let adopted = entries[device] {
            source = adopted
        } else if let auto = automatic.entries[device] {
            source = Entry(address: auto.address, decoder: auto.decoder, name: device)
        } else if running.device(id: device) != nil {
            return .failure(
                CommandFailure(
                    .notAllowed, "\(device) is configured in the configuration file; change it there, not by adoption"))
        } else {
            return .failure(
                CommandFailure(.unknownDevice, "no automatic device '\(device)' (bridge/devices lists them)"))
        }
        if let problem = DeviceConfiguration.idProblem(id) {
            return .failure(CommandFailure(.invalidValue, "id: " + problem))
        }
        if id != device, running.device(id: id) != nil || entries[id] != nil {
            return .failure(CommandFailure(.idTaken, "a device '\(id)' exists already; choose another id"))
        }
        let entry = Entry(
            address: source.address, decoder: source.decoder, name: name ?? (id == device ? source.name : id),
            bindKey: bindKey ?? source.bindKey)
        return .success(Adoption(id: id, entry: entry, previousID: device))
    }

    /// Removes the adopted device `id`; false when there is none.
    package mutating func remove(_ id: String) -> Bool {
        entries.removeValue(forKey: id) != nil
    }

    /// Records an adoption checked by ``adoption(of:as:name:bindKey:automatic:running:)``.
    package mutating func apply(_ adoption: Adoption) {
        entries[adoption.previousID] = nil
        entries[adoption.id] = adoption.entry
    }

    /// The configuration with one passive device per adopted entry appended (before automatic
    /// devices, whose expansion then skips their addresses): match on its address, its decoder,
    /// its bind key. Entries whose id or address a device of `configuration` has are left out.
    package func expand(_ configuration: BridgeConfiguration) -> BridgeConfiguration {
        var expanded = configuration
        var ids = Set(configuration.devices.map(\.id))
        let pinned = Set(configuration.devices.compactMap { $0.match.address?.bytes })
        for (id, entry) in entries.sorted(by: { $0.key < $1.key }) {
            guard let address = BluetoothAddress(entry.address), !pinned.contains(address.bytes),
                ids.insert(id).inserted
            else { continue }
            expanded.devices.append(
                DeviceConfiguration(
                    id: id, name: entry.name, match: DeviceMatch(address: address), connection: .passive,
                    advertisement: AdvertisementSettings(
                        decoder: entry.decoder,
                        bindKey: entry.bindKey ?? configuration.autoDevices.bindKey(for: address))))
        }
        return expanded
    }

    /// The `devices[]` entry that configures the same device in config.json (for a client that
    /// prefers the file, and for `blebridge scan --config`).
    package static func snippet(id: String, name: String?, address: String, decoder: String, bindKey: [UInt8]?)
        -> JSONValue
    {
        var advertisement = [JSONMember("decoder", .string(decoder))]
        if let bindKey { advertisement.append(JSONMember("bind_key", .string(Hex.string(bindKey)))) }
        return .object(
            [JSONMember("id", .string(id))] + (name.map { [JSONMember("name", .string($0))] } ?? []) + [
                JSONMember("match", .object([JSONMember("address", .string(address))])),
                JSONMember("advertisement", .object(advertisement)),
            ])
    }
}
