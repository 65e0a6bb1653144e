import DBus
import Foundation
import Timekeeping

/// `io.blebridge.Simulator1` at `/io/blebridge/Simulator` on the name `io.blebridge.Simulator`.
extension BlueZSimulator {
    package static let controlPath = "/io/blebridge/Simulator"
    package static let controlInterface = "io.blebridge.Simulator1"

    func exportControl(on connection: DBusConnection) async throws {
        func method(
            _ name: String, _ inSignature: DBusSignature = .empty, _ outSignature: DBusSignature = .empty,
            _ body: @escaping @Sendable (BlueZSimulator, [DBusValue]) async throws -> [DBusValue]
        ) -> DBusMethod {
            DBusMethod(name: name, inSignature: inSignature, outSignature: outSignature) { [weak self] call in
                guard let self else { throw SimulatorError(.notRunning, "the simulator stopped").dbus }
                do {
                    return try await body(self, call.arguments)
                } catch let error as SimulatorError {
                    throw error.dbus
                }
            }
        }
        let interface = DBusInterface(
            name: Self.controlInterface,
            methods: [
                method("SetPowered", "b") { simulator, arguments in
                    await simulator.setPowered(arguments[0].asBool ?? true)
                    return []
                },
                method("RestartBluez") { simulator, _ in
                    try await simulator.restartBluez()
                    return []
                },
                method("RestartBluezWithDowntime", "d") { simulator, arguments in
                    let seconds = arguments[0].asDouble ?? 1
                    guard seconds >= 0, seconds <= 600 else {
                        throw SimulatorError(.invalidArguments, "downtime must be 0…600 s")
                    }
                    try await simulator.restartBluez(downtime: .milliseconds(Int64(seconds * 1000)))
                    return []
                },
                method("RestartBluezWithSignal", "sd") { simulator, arguments in
                    let name = arguments[0].asString ?? ""
                    guard let stop = BluezStop(rawValue: name) else {
                        throw SimulatorError(.invalidArguments, "signal must be TERM or KILL, not \"\(name)\"")
                    }
                    let seconds = arguments[1].asDouble ?? 1
                    guard seconds >= 0, seconds <= 600 else {
                        throw SimulatorError(.invalidArguments, "downtime must be 0…600 s")
                    }
                    try await simulator.restartBluez(downtime: .milliseconds(Int64(seconds * 1000)), stop: stop)
                    return []
                },
                method("RemoveAdapter") { simulator, _ in
                    try await simulator.removeAdapter()
                    return []
                },
                method("AddAdapter") { simulator, _ in
                    try await simulator.addAdapter()
                    return []
                },
                method("DisconnectDevice", "s") { simulator, arguments in
                    try await simulator.disconnect(address: arguments[0].asString ?? "")
                    return []
                },
                method("SetDeviceInRange", "sb") { simulator, arguments in
                    try await simulator.setDeviceInRange(
                        address: arguments[0].asString ?? "", arguments[1].asBool ?? true)
                    return []
                },
                method("SetRSSI", "sn") { simulator, arguments in
                    try await simulator.setRSSI(address: arguments[0].asString ?? "", arguments[1].asInt16 ?? -127)
                    return []
                },
                method("MakeGATTCacheStale", "ss") { simulator, arguments in
                    try await simulator.makeGATTCacheStale(
                        address: arguments[0].asString ?? "", service: arguments[1].asString ?? "")
                    return []
                },
                method("InjectConnectFailure", "sssu") { simulator, arguments in
                    let failure = try Self.failure(
                        name: arguments[1].asString ?? "", message: arguments[2].asString ?? "")
                    try await simulator.injectConnectFailure(
                        address: arguments[0].asString ?? "", failure, count: Int(arguments[3].asUInt32 ?? 1))
                    return []
                },
                method("GetWrites", "s", "aa{sv}") { simulator, arguments in
                    let writes = try await simulator.writes(address: arguments[0].asString ?? "")
                    return [
                        .array(
                            elementSignature: "a{sv}",
                            writes.map { write in
                                .properties([
                                    "uuid": .string(write.characteristic.uuidString), "value": .bytes(write.value),
                                    "type": .string(write.type.rawValue), "accepted": .boolean(write.accepted),
                                    "sender": .string(write.sender), "time": .double(write.time.timeIntervalSince1970),
                                ])
                            })
                    ]
                },
                method("ClearWrites", "s") { simulator, arguments in
                    try await simulator.clearWrites(address: arguments[0].asString ?? "")
                    return []
                },
                method("GetCharacteristicValue", "ss", "ay") { simulator, arguments in
                    [
                        .bytes(
                            try await simulator.characteristicValue(
                                address: arguments[0].asString ?? "", uuid: arguments[1].asString ?? ""))
                    ]
                },
                method("SetCharacteristicValue", "ssayb") { simulator, arguments in
                    try await simulator.setCharacteristicValue(
                        address: arguments[0].asString ?? "", uuid: arguments[1].asString ?? "",
                        value: arguments[2].asBytes ?? [],
                        notify: arguments[3].asBool ?? true)
                    return []
                },
                method("Burst", "ssu") { simulator, arguments in
                    try await simulator.burst(
                        address: arguments[0].asString ?? "", uuid: arguments[1].asString ?? "",
                        count: Int(arguments[2].asUInt32 ?? 0))
                    return []
                },
                method("SetLoad", "ud") { simulator, arguments in
                    try await simulator.setLoad(
                        devices: Int(arguments[0].asUInt32 ?? 0), rate: arguments[1].asDouble ?? 0)
                    return []
                },
                method("GetLoadStatistics", .empty, "a{sv}") { simulator, _ in
                    let statistics = await simulator.loadStatistics()
                    return [
                        .properties([
                            "devices": .uint32(UInt32(statistics.devices)), "rate": .double(statistics.rate),
                            "sent": .uint64(statistics.sent), "elapsed": .double(statistics.elapsed.inSeconds),
                            "achieved_rate": .double(statistics.achievedRate),
                            "sequences": .array(elementSignature: "t", statistics.lastSequences.map { .uint64($0) }),
                            "dropped": .array(
                                elementSignature: "t", statistics.droppedAtFullSocket.map { .uint64($0) }),
                        ])
                    ]
                },
                method("GetLoadSendTimes", "u", "tat") { simulator, arguments in
                    let kept = await simulator.loadSendTimes(device: Int(arguments[0].asUInt32 ?? 0))
                    return [.uint64(kept.first), .array(elementSignature: "t", kept.nanoseconds.map { .uint64($0) })]
                },
                method("GetDeviceState", "s", "a{sv}") { simulator, arguments in
                    let snapshot = try await simulator.snapshot(address: arguments[0].asString ?? "")
                    return [
                        .properties([
                            "address": .string(snapshot.address), "name": .string(snapshot.name ?? ""),
                            "present": .boolean(snapshot.present), "in_range": .boolean(snapshot.inRange),
                            "connected": .boolean(snapshot.connected),
                            "services_resolved": .boolean(snapshot.servicesResolved),
                            "paired": .boolean(snapshot.paired), "trusted": .boolean(snapshot.trusted),
                            "notifying": .strings(snapshot.notifying),
                        ])
                    ]
                },
                method("ListDevices", .empty, "as") { simulator, _ in
                    [.strings(await simulator.deviceAddresses())]
                },
            ], properties: [], signals: [])
        try await connection.export(path: try DBusObjectPath(Self.controlPath), interfaces: [interface])
    }

    /// `InjectConnectFailure`'s error argument: a kind (`abort_by_local`, `in_progress`, `timeout`) or a BlueZ error name.
    static func failure(name: String, message: String) throws(SimulatorError) -> ConnectFailureKind {
        if let kind = ConnectFailureKind(named: name) { return kind }
        guard name.hasPrefix("org.bluez.Error."), name.count > 16 else {
            throw SimulatorError(
                .invalidArguments, "error must be abort_by_local, in_progress, timeout or an org.bluez.Error.* name")
        }
        return .error(BlueZError(name: name, message: message))
    }
}
