import Bluetooth
import Configuration
import Gateway
import JSON
import Testing

@Suite struct CommandGateTests {
    static let power = BluetoothUUID("6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let brightness = BluetoothUUID("6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let alert = BluetoothUUID(UInt16(0x2A06))
    static let battery = BluetoothUUID(UInt16(0x2A19))

    static func policy(raw: Bool = false, rate: Double? = nil) -> CommandPolicy {
        CommandPolicy(
            devices: [
                DeviceCommandPolicy(
                    deviceID: "lamp",
                    commands: [
                        NamedCommand(
                            name: "power", characteristic: power, operations: [.read, .write],
                            format: ValueFormat(.bool)),
                        NamedCommand(
                            name: "brightness", characteristic: brightness, operations: [.read, .write],
                            format: ValueFormat(.uint8, minimum: 0, maximum: 100)),
                        NamedCommand(
                            name: "alert_level", characteristic: alert, operations: [.write],
                            format: ValueFormat(.alertLevel),
                            writeType: .withoutResponse),
                        NamedCommand(
                            name: "state", characteristic: battery, operations: [.read], format: ValueFormat(.hex)),
                    ],
                    readTargets: ["battery": CharacteristicTarget(battery)],
                    rawAllow: [CharacteristicTarget(power): [.read, .write]], rate: rate),
                DeviceCommandPolicy(deviceID: "hr_strap", readTargets: ["battery": CharacteristicTarget(battery)]),
            ], rawGATTEnabled: raw)
    }

    let topics = TopicContract()
    let now = ContinuousClock.now

    func admit(
        _ gate: inout CommandGate, _ topic: String, _ payload: String
    ) -> Result<ValidatedCommand, CommandFailure> {
        gate.admit(topic: topic, kind: topics.classify(topic)!, payload: Array(payload.utf8), at: now)
    }

    /// `<device>/set/<name>` with a plain value, as Zigbee2MQTT clients send it.
    @Test func acceptsAPlainValueOnAnAttributeTopic() throws {
        var gate = CommandGate(policy: Self.policy())
        let on = try admit(&gate, "blebridge/lamp/set/power", "ON").get()
        #expect(
            on.steps == [
                .write(device: "lamp", characteristic: Self.power, value: [1], type: .withResponse, name: "power")
            ])
        #expect(on.source == "blebridge/lamp/set/power")
        let eighty = try admit(&gate, "blebridge/lamp/set/brightness", " 80\n").get()
        #expect(
            eighty.steps == [
                .write(
                    device: "lamp", characteristic: Self.brightness, value: [80], type: .withResponse,
                    name: "brightness")
            ])
        let mild = try admit(&gate, "blebridge/lamp/set/alert_level", "mild").get()
        #expect(mild.steps.count == 1)
        let read = try admit(&gate, "blebridge/lamp/get/battery", "").get()
        #expect(read.steps == [.read(device: "lamp", characteristic: Self.battery, name: "battery")])
    }

    @Test func refusesAPlainValueClearly() {
        var gate = CommandGate(policy: Self.policy())
        #expect(admit(&gate, "blebridge/lamp/set/brightness", "ON").failure?.code == .invalidValue)
        let unknown = admit(&gate, "blebridge/lamp/set/colour", "red").failure
        #expect(unknown?.code == .notAllowed)
        #expect(unknown?.message == "'colour' is not a writable command of lamp")
        #expect(
            admit(&gate, "blebridge/lamp/set/power", "").failure?.message == "set/power needs a value, e.g. ON or 80")
        #expect(admit(&gate, "blebridge/lamp/set/", "1").failure?.code == .invalidRequest)
        #expect(admit(&gate, "blebridge/nothing/set/power", "ON").failure?.code == .unknownDevice)
    }

    @Test func bridgeRequestsAcceptAnEmptyPayload() throws {
        var gate = CommandGate(policy: Self.policy())
        #expect(try admit(&gate, "blebridge/bridge/request/devices", "").get().steps == [.listDevices])
        #expect(try admit(&gate, "blebridge/bridge/request/scan", " \n").get().steps == [.scan(duration: .seconds(10))])
        #expect(try admit(&gate, "blebridge/bridge/request/restart", "").get().steps == [.restart])
        #expect(try admit(&gate, "blebridge/bridge/request/config/reload", "{}").get().steps == [.reloadConfiguration])
        // A device command still needs its JSON object.
        #expect(admit(&gate, "blebridge/lamp/set", "").failure?.code == .invalidJSON)
        #expect(admit(&gate, "blebridge/bridge/request/connect", "").failure?.message == "'device' is required")
    }

    @Test func scanDurationsTakeTheConfigurationsForms() throws {
        var gate = CommandGate(policy: Self.policy())
        #expect(
            try admit(&gate, "blebridge/bridge/request/scan", #"{"duration":"5s"}"#).get().steps == [
                .scan(duration: .seconds(5))
            ])
        #expect(
            try admit(&gate, "blebridge/bridge/request/scan", #"{"duration":"1500ms"}"#).get().steps == [
                .scan(duration: .milliseconds(1500))
            ])
        #expect(
            try admit(&gate, "blebridge/bridge/request/scan", #"{"duration":7}"#).get().steps == [
                .scan(duration: .seconds(7))
            ])
        #expect(admit(&gate, "blebridge/bridge/request/scan", #"{"duration":"2m"}"#).failure?.code == .invalidValue)
        #expect(admit(&gate, "blebridge/bridge/request/scan", #"{"duration":"5"}"#).failure?.code == .invalidValue)
    }

    @Test func acceptsANamedSetWithTransaction() throws {
        var gate = CommandGate(policy: Self.policy())
        let command = try admit(&gate, "blebridge/lamp/set", #"{"power":true,"brightness":40,"transaction":"t-1"}"#)
            .get()
        #expect(command.transaction == "t-1")
        #expect(command.device == "lamp")
        #expect(command.source == "blebridge/lamp/set")
        #expect(
            command.steps == [
                .write(device: "lamp", characteristic: Self.power, value: [1], type: .withResponse, name: "power"),
                .write(
                    device: "lamp", characteristic: Self.brightness, value: [40], type: .withResponse,
                    name: "brightness"),
            ])
        let alert = try admit(&gate, "blebridge/lamp/set", #"{"alert_level":"high","transaction":7}"#).get()
        #expect(alert.transaction == .int(7))
        #expect(
            alert.steps == [
                .write(
                    device: "lamp", characteristic: Self.alert, value: [2], type: .withoutResponse, name: "alert_level")
            ])
    }

    @Test func getReadsNamedCommandsAndSubscribedCharacteristics() throws {
        var gate = CommandGate(policy: Self.policy())
        let command = try admit(&gate, "blebridge/lamp/get", #"{"battery":"","power":""}"#).get()
        #expect(
            command.steps == [
                .read(device: "lamp", characteristic: Self.battery, name: "battery"),
                .read(device: "lamp", characteristic: Self.power, name: "power"),
            ])
        #expect(admit(&gate, "blebridge/lamp/get", #"{"alert_level":""}"#).failureCode == .notAllowed)
        #expect(admit(&gate, "blebridge/lamp/set", #"{"state":"00"}"#).failureCode == .notAllowed)
    }

    @Test func refusesMalformedAndUnknownWithDocumentedCodes() {
        var gate = CommandGate(policy: Self.policy())
        #expect(admit(&gate, "blebridge/lamp/set", "{power:1}").failureCode == .invalidJSON)
        #expect(admit(&gate, "blebridge/lamp/set", "[1]").failureCode == .invalidJSON)
        #expect(admit(&gate, "blebridge/lamp/set", "{}").failureCode == .invalidRequest)
        #expect(admit(&gate, "blebridge/lamp/set", #"{"transaction":[1],"power":true}"#).failureCode == .invalidRequest)
        #expect(admit(&gate, "blebridge/oven/set", #"{"power":true}"#).failureCode == .unknownDevice)
        #expect(admit(&gate, "blebridge/lamp/set", #"{"colour":"red"}"#).failureCode == .notAllowed)
        #expect(admit(&gate, "blebridge/hr_strap/set", #"{"power":true}"#).failureCode == .notAllowed)
        #expect(admit(&gate, "blebridge/lamp/set", #"{"brightness":"bright"}"#).failureCode == .invalidValue)
        #expect(admit(&gate, "blebridge/lamp/set", #"{"brightness":101}"#).failureCode == .invalidValue)
        #expect(admit(&gate, "blebridge/bridge/request/reboot", "{}").failureCode == .invalidRequest)
        let huge = "{\"power\":\"" + String(repeating: "x", count: 20_000) + "\"}"
        #expect(admit(&gate, "blebridge/lamp/set", huge).failureCode == .payloadTooLarge)
    }

    @Test func failuresCarryTheTransaction() {
        var gate = CommandGate(policy: Self.policy())
        guard case .failure(let failure) = admit(&gate, "blebridge/lamp/set", #"{"colour":1,"transaction":"abc"}"#)
        else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure.transaction == "abc")
        #expect(
            CommandResponse.error(failure).serialized
                == #"{"transaction":"abc","status":"error","error":{"code":"not_allowed","message":"'colour' is not a writable command of lamp"}}"#
        )
    }

    @Test func rawGATTIsOffByDefaultAndAllowlistedWhenOn() throws {
        var closed = CommandGate(policy: Self.policy())
        let write =
            #"{"device":"lamp","characteristic":"6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b","value":"01","transaction":"w"}"#
        #expect(admit(&closed, "blebridge/bridge/request/gatt/write", write).failureCode == .notAllowed)
        var open = CommandGate(policy: Self.policy(raw: true))
        let command = try admit(&open, "blebridge/bridge/request/gatt/write", write).get()
        #expect(
            command.steps == [
                .write(device: "lamp", characteristic: Self.power, value: [1], type: .withResponse, name: nil)
            ])
        let noResponse =
            #"{"device":"lamp","characteristic":"6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b","value":"00","response":false}"#
        #expect(
            try admit(&open, "blebridge/bridge/request/gatt/write", noResponse).get().steps
                == [.write(device: "lamp", characteristic: Self.power, value: [0], type: .withoutResponse, name: nil)])
        let brightness = #"{"device":"lamp","characteristic":"6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b","value":"01"}"#
        #expect(admit(&open, "blebridge/bridge/request/gatt/write", brightness).failureCode == .notAllowed)
        let notify = #"{"device":"lamp","characteristic":"6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b","enable":true}"#
        #expect(admit(&open, "blebridge/bridge/request/gatt/notify", notify).failureCode == .notAllowed)
        #expect(
            admit(&open, "blebridge/bridge/request/gatt/read", #"{"device":"lamp"}"#).failureCode == .invalidRequest)
        #expect(
            admit(&open, "blebridge/bridge/request/gatt/read", #"{"device":"lamp","characteristic":"zz"}"#).failureCode
                == .invalidValue)
        #expect(
            admit(&open, "blebridge/bridge/request/gatt/read", #"{"device":7,"characteristic":"2a19"}"#).failureCode
                == .invalidRequest)
        #expect(
            admit(&open, "blebridge/bridge/request/gatt/read", #"{"device":"x","characteristic":"2a19"}"#).failureCode
                == .unknownDevice)
        #expect(
            admit(
                &open, "blebridge/bridge/request/gatt/write",
                #"{"device":"lamp","characteristic":"6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b","value":"01","extra":1}"#
            ).failureCode
                == .invalidRequest)
    }

    @Test func rawGATTTakesAnOptionalService() throws {
        var gate = CommandGate(policy: Self.policy(raw: true))
        let power = #""device":"lamp","characteristic":"6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b""#
        let back = BluetoothUUID("6b1e0201-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
        let service = #","service":"6b1e0201-3c4d-4e5f-8a9b-0c1d2e3f4a5b""#
        #expect(
            try admit(&gate, "blebridge/bridge/request/gatt/read", "{\(power)\(service)}").get().steps
                == [.read(device: "lamp", characteristic: Self.power, name: nil, service: back)])
        #expect(
            try admit(&gate, "blebridge/bridge/request/gatt/write", "{\(power)\(service),\"value\":\"01\"}").get().steps
                == [
                    .write(
                        device: "lamp", characteristic: Self.power, value: [1], type: .withResponse, name: nil,
                        service: back)
                ])
        // Without a service: none is named (the device's first service holding the UUID is used).
        #expect(
            try admit(&gate, "blebridge/bridge/request/gatt/read", "{\(power)}").get().steps
                == [.read(device: "lamp", characteristic: Self.power, name: nil, service: nil)])
        // The allowlist still decides, whatever the service.
        let notify = "{\(power)\(service),\"enable\":true}"
        #expect(admit(&gate, "blebridge/bridge/request/gatt/notify", notify).failureCode == .notAllowed)
        let bad = admit(&gate, "blebridge/bridge/request/gatt/read", "{\(power),\"service\":\"nope\"}")
        #expect(bad.failureCode == .invalidValue)
        #expect(
            admit(&gate, "blebridge/bridge/request/gatt/read", "{\(power),\"service\":6144}").failureCode
                == .invalidRequest)
    }

    /// An allowlist entry naming a service reaches the characteristic in that service only.
    @Test func rawGATTAllowlistEntriesMayNameAService() throws {
        let front = BluetoothUUID("6b1e0101-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
        let back = BluetoothUUID("6b1e0201-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
        let label = BluetoothUUID("6b1e0102-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
        let panel = DeviceCommandPolicy(
            deviceID: "panel",
            rawAllow: [
                CharacteristicTarget(label, service: front): [.read, .notify],
                CharacteristicTarget(label, service: back): [.notify],
            ])
        var gate = CommandGate(policy: CommandPolicy(devices: [panel], rawGATTEnabled: true))
        let device = #""device":"panel","characteristic":"6b1e0102-3c4d-4e5f-8a9b-0c1d2e3f4a5b""#
        func service(_ uuid: BluetoothUUID) -> String { #","service":"\#(uuid)""# }
        // The named service: reachable there.
        #expect(
            try admit(&gate, "blebridge/bridge/request/gatt/read", "{\(device)\(service(front))}").get().steps
                == [.read(device: "panel", characteristic: label, name: nil, service: front)])
        // Without a service: the one service the read entries name, not the device's first.
        #expect(
            try admit(&gate, "blebridge/bridge/request/gatt/read", "{\(device)}").get().steps
                == [.read(device: "panel", characteristic: label, name: nil, service: front)])
        // The same characteristic in another service: refused.
        let other = admit(&gate, "blebridge/bridge/request/gatt/read", "{\(device)\(service(back))}")
        #expect(other.failureCode == .notAllowed)
        #expect(other.failureMessage?.contains("in service 6b1e0201") == true, "\(other)")
        #expect(
            admit(&gate, "blebridge/bridge/request/gatt/read", "{\(device),\"service\":\"180f\"}").failureCode
                == .notAllowed)
        // Notify is allowed in both: the request must say which.
        #expect(
            try admit(&gate, "blebridge/bridge/request/gatt/notify", "{\(device)\(service(back)),\"enable\":true}")
                .get().steps == [.notify(device: "panel", characteristic: label, enable: true, service: back)])
        let ambiguous = admit(&gate, "blebridge/bridge/request/gatt/notify", "{\(device),\"enable\":true}")
        #expect(ambiguous.failureCode == .invalidRequest)
        #expect(ambiguous.failureMessage?.contains("'service' is required") == true, "\(ambiguous)")
        // An entry without a service still reaches every service.
        var open = CommandGate(policy: Self.policy(raw: true))
        let anywhere = #""device":"lamp","characteristic":"6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b""#
        #expect(
            try admit(&open, "blebridge/bridge/request/gatt/read", "{\(anywhere)\(service(back))}").get().steps
                == [.read(device: "lamp", characteristic: Self.power, name: nil, service: back)])
    }

    @Test func bridgeRequests() throws {
        var gate = CommandGate(policy: Self.policy())
        #expect(try admit(&gate, "blebridge/bridge/request/devices", "{}").get().steps == [.listDevices])
        #expect(
            try admit(&gate, "blebridge/bridge/request/scan", #"{"duration":5}"#).get().steps == [
                .scan(duration: .seconds(5))
            ])
        #expect(admit(&gate, "blebridge/bridge/request/scan", #"{"duration":500}"#).failureCode == .invalidValue)
        #expect(
            try admit(&gate, "blebridge/bridge/request/connect", #"{"device":"lamp"}"#).get().steps == [
                .connect(device: "lamp")
            ])
        #expect(admit(&gate, "blebridge/bridge/request/disconnect", #"{}"#).failureCode == .invalidRequest)
    }

    @Test func rateLimitsPerDevice() {
        var gate = CommandGate(policy: Self.policy(rate: 2))
        let results = (0..<5).map { _ in admit(&gate, "blebridge/lamp/set", #"{"power":true}"#) }
        #expect(results.filter { (try? $0.get()) != nil }.count == 2)
        #expect(results.last?.failureCode == .rateLimited)
        // Another device has its own bucket.
        #expect((try? admit(&gate, "blebridge/hr_strap/get", #"{"battery":""}"#).get()) != nil)
        #expect(
            gate.admit(
                topic: "blebridge/lamp/set", kind: .device("lamp", .set), payload: Array(#"{"power":true}"#.utf8),
                at: now + .seconds(1)
            ).failureCode == nil)
    }

    @Test func okResponseShape() {
        #expect(
            CommandResponse.ok(transaction: "t", data: .object([JSONMember("power", true)])).serialized
                == #"{"transaction":"t","status":"ok","data":{"power":true}}"#)
        #expect(CommandResponse.ok(transaction: nil).serialized == #"{"status":"ok"}"#)
    }
}

extension Result where Failure == CommandFailure {
    fileprivate var failureMessage: String? {
        if case .failure(let failure) = self { return failure.message }
        return nil
    }

    fileprivate var failure: CommandFailure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
