import JSON
import MQTT

/// Shared-broker mode: which gateway carries out and answers a request sent to the shared
/// `<base>/bridge/request/<kind>` topic, so that every gateway receives it but one answers
/// (docs/multi-gateway.md, "Bridge requests"). A request on a gateway's own topic
/// (`<base>/bridge/gateways/<id>/request/<kind>`) is that gateway's alone and never comes here.
extension Gateway {
    /// What this gateway does with a shared request.
    enum SharedRequestDuty: Equatable {
        /// Carry it out and answer.
        case answer
        /// Carry it out, answer nothing (another gateway answers): adoptions and removals, which
        /// every gateway applies so the device has one id everywhere.
        case mute
        /// Refuse it with `no_owner`: nobody owns the device and this gateway is the speaker.
        case refuse(String)
        /// Leave it to another gateway.
        case silent
    }

    /// Who answers, by what the request is about:
    /// - a device it operates on (`gatt/read`, `gatt/write`, `gatt/notify`, `connect`, `disconnect`):
    ///   the device's owner, as for `<device>/set`; with no owner, the speaker refuses it;
    /// - a device's registration (`device/adopt`, `device/remove`): every gateway that knows the
    ///   device applies it, the owner (or, with none, the speaker) answers;
    /// - the gateway itself (`scan`, `devices`, `config/reload`, `restart`): the installation's
    ///   speaker, the online gateway with the smallest id (the others have their own topics);
    /// - a device no gateway's candidacy names, or a payload without a usable `device`: the
    ///   speaker (it answers `unknown_device` or the payload's error, as a single gateway would).
    func sharedRequestDuty(_ kind: BridgeRequestKind, payload: [UInt8]) -> SharedRequestDuty {
        let registry: Bool
        switch kind {
        case .scan, .devices, .configReload, .restart:
            return isInstallationSpeaker ? .answer : .silent
        case .gattRead, .gattWrite, .gattNotify, .connect, .disconnect:
            registry = false
        case .adopt, .remove:
            registry = true
        }
        guard let id = Self.requestedDevice(payload), !id.isEmpty else {
            return isInstallationSpeaker ? .answer : .silent
        }
        guard let duty = ownership?.duty(for: id), ownership?.governs(id) == true else {
            // Not a device this gateway follows: its answer (unknown_device) is the speaker's,
            // and only when no other gateway's candidacy names the device.
            return isInstallationSpeaker && !isKnownElsewhere(id) ? .answer : .silent
        }
        switch duty {
        case .owner: return .answer
        case .speaker: return registry ? .answer : .refuse(id)
        case .silent: return registry ? .mute : .silent
        }
    }

    /// The request's `device` member, when the payload is a JSON object that has one as a string.
    static func requestedDevice(_ payload: [UInt8]) -> String? {
        guard let value = try? JSONParser().parse(payload) else { return nil }
        return value["device"]?.stringValue
    }

    /// Whether this gateway is the installation's speaker: the smallest id of the gateways online
    /// (itself included). Always true without the mode.
    var isInstallationSpeaker: Bool {
        guard let ownership else { return true }
        return ownership.online.union([ownership.me]).min() == ownership.me
    }

    /// Whether an online gateway other than this one has a candidacy for `device` up.
    func isKnownElsewhere(_ device: String) -> Bool {
        guard let ownership, let gateways = candidaciesElsewhere.value(exactly: device) else { return false }
        return !gateways.isDisjoint(with: ownership.online)
    }

    /// Follows which other gateways have a candidacy up for each device (``candidaciesElsewhere``).
    func noteCandidacy(gateway: String, device: String, up: Bool) {
        guard gateway != model.configuration.gatewayID else { return }
        if up {
            candidaciesElsewhere[device, default: []].insert(gateway)
        } else {
            candidaciesElsewhere[device]?.remove(gateway)
            if candidaciesElsewhere[device]?.isEmpty == true { candidaciesElsewhere[device] = nil }
        }
    }
}
