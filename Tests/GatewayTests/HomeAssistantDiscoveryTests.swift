import Bluetooth
import Configuration
import Decoders
import Foundation
import Gateway
import HomeAssistantTables
import JSON
import Testing

/// Every discovery payload the gateway can produce, checked against Home Assistant's tables
/// (``HomeAssistantTables``, pinned to one release): the fields of every decoder (found by
/// feeding each one seeded random values, with headers that steer into its optional fields, and
/// every BTHome object id), the controls of the sample configuration and the bridge's entities.
@Suite struct HomeAssistantDiscoveryTests {
    let builder = DiscoveryBuilder(topics: TopicContract(), gatewayID: "blebridge")
    let device = DiscoveryDevice(id: "dev", name: "Device", address: "C0:FF:EE:00:00:01")

    /// One distinct field a decoder produced: name, unit, kind and a sample value.
    struct Produced: Hashable {
        var decoder: String
        var name: String
        var unit: String?
        var kind: FieldKind
        var sample: JSONValue
    }

    static let context = AdvertisementContext(
        address: BluetoothAddress("54:48:E6:8F:80:A5"),
        bindKey: Array(repeating: 0x11, count: 16))

    /// The fields every built-in decoder produced for 4,000 seeded random inputs (a quarter with
    /// each of the decoder's steering headers), plus every BTHome object id; computed once, by
    /// ``computeProduced()``.
    ///
    /// Not a `static let` of the result: its initializer runs under a lock (`swift_once`), and three
    /// tests read it. The first computed it for about 5 s of CPU in a debug build without a suspension
    /// point, and a second one started meanwhile blocked in that lock: both cooperative threads of the
    /// test process were held, so every other test's tasks (in-process simulators, MQTT recorders)
    /// stood still (the largest share of the pool's samples in a `perf` profile of a full run, with
    /// bleak's 5 s notification wait failing under load). A task computes it and yields every 256
    /// decodes; the tests await it.
    static let producing = Task { await computeProduced() }

    static func produced() async -> [Produced] { await producing.value }

    static func computeProduced() async -> [Produced] {
        var generator = SeededRandomNumberGenerator(seed: 0x4841_5f74_6162_6c65)
        var seen: [String: Produced] = [:]
        var decoded = 0
        func record(_ decoder: String, _ readings: [DecodedReading]) async {
            decoded += 1
            if decoded % 256 == 0 { await Task.yield() }
            for reading in readings where reading.isSuccess {
                for field in reading.fields {
                    let key = "\(decoder)|\(field.name)|\(field.unit ?? "")|\(field.kind)|\(Self.shape(field.value))"
                    if seen[key] == nil {
                        seen[key] = Produced(
                            decoder: decoder, name: field.name, unit: field.unit, kind: field.kind,
                            sample: JSONValue(field.value))
                    }
                }
            }
        }
        func random(_ prefix: [UInt8]) -> [UInt8] {
            prefix
                + (0..<Int.random(in: 0...24, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
        }
        for decoder in DecoderRegistry.builtInCharacteristics {
            for prefix: [UInt8] in [[], [0xFF], [0x1F], [0x07]] {
                for _ in 0..<1_000 { await record(decoder.name, [decoder.reading(random(prefix))]) }
            }
        }
        for decoder in DecoderRegistry.builtInAdvertisements {
            let prefixes: [[UInt8]] =
                switch decoder.name {
                case "ibeacon": [[0x02, 0x15]]
                case "eddystone": [[0x00], [0x10], [0x20, 0x00], [0x30]]
                case "ruuvi": [[0x05], [0x03]]
                case "bthome_v1": [[0x23, 0x02], [0xA5, 0x50], [0x43, 0x06], [0x08, 0x00], [0x02, 0x3A]]
                case "switchbot", "switchbot_0d00": [[0x54], [0x77], [0x35], [0x64], [0x73], [0x48]]
                case "qingping": [[0x08, 0x12, 1, 2, 3, 4, 5, 6], [0x48, 0x12, 1, 2, 3, 4, 5, 6, 0x08, 0x04]]
                case "sensorpush": [[0x00], [0x04], [0x08]]
                case "oralb": [[0x03, 0x20, 0x01, 0x03], [0x04, 0x35, 0x10, 0x02]]
                case "mopeka": [[0x59, 0x00, 0x03], [0x59, 0x00, 0x0C]]
                default: [[]]
                }
            for prefix in prefixes {
                for _ in 0..<(4_000 / prefixes.count) {
                    await record(decoder.name, [decoder.reading(random(prefix), context: context)])
                }
            }
        }
        // BTHome v2, unencrypted: every object id with values of every length.
        let bthome = BTHomeDecoder()
        for id in UInt8.min...UInt8.max {
            for length in 1...8 {
                for _ in 0..<4 {
                    let value = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    await record("bthome", [bthome.reading([0x40, id] + value, context: context)])
                }
            }
        }
        // MiBeacon, unencrypted v5 (LYWSD03MMC header): the object ids 0x000F and 0x1000–0x101F
        // with data of 1–4 bytes (the lengths of every object it decodes).
        let mibeacon = MiBeaconDecoder()
        for id in [UInt16(0x000F)] + Array(0x1000...0x101F) {
            for length in 1...4 {
                for _ in 0..<4 {
                    let value = (0..<length).map { _ in UInt8.random(in: 0...3, using: &generator) }
                    let frame: [UInt8] = [
                        0x40, 0x50, 0x5B, 0x05, 0x01, UInt8(id & 0xFF), UInt8(id >> 8), UInt8(length),
                    ]
                    await record("mibeacon", [mibeacon.reading(frame + value, context: context)])
                }
            }
        }
        // MiBeacon's button object 0x1001: models of each layout and one unknown (0x1234), every
        // button, value and press type the tables have, and beyond.
        for product: UInt16 in [0x0A8D, 0x1568, 0x1569, 0x0DFD, 0x0153, 0x068E, 0x04E6, 0x03BF, 0x03B6, 0x04E1, 0x1234]
        {
            for index: UInt8 in [0, 1, 2, 3, 4, 5, 6, 7, 8, 0xFE] {
                for press: UInt8 in 0...6 {
                    let frame: [UInt8] = [
                        0x40, 0x50, UInt8(product & 0xFF), UInt8(product >> 8), 0x01, 0x01, 0x10, 0x03, index, 0xFD,
                        press,
                    ]
                    await record("mibeacon", [mibeacon.reading(frame, context: context)])
                }
            }
        }
        // SwitchBot meters with their manufacturer data (the Outdoor Meter's reading, CO2).
        var switchbotContext = context
        for code: UInt8 in [0x35, 0x77, 0x64, 0x73] {
            for _ in 0..<250 {
                switchbotContext.manufacturerData = [0x0969: random([]) + random([])]
                await record("switchbot", [SwitchBotDecoder().reading(random([code]), context: switchbotContext)])
            }
        }
        // Qingping: every object id 0x00–0x1F with data of 1–4 bytes.
        for id in UInt8(0)...0x1F {
            for length in UInt8(1)...4 {
                for _ in 0..<4 {
                    let value = (0..<length).map { _ in UInt8.random(in: 0...2, using: &generator) }
                    let frame: [UInt8] = [0x08, 0x12, 1, 2, 3, 4, 5, 6, id, length]
                    await record("qingping", [QingpingDecoder().reading(frame + value, context: context)])
                }
            }
        }
        // Victron Instant Readout: each record type the decoder reads, random records encrypted with
        // the context's key.
        for type: UInt8 in [0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0A, 0x0D, 0x0F] {
            for _ in 0..<250 {
                let plain = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if let frame = try? VictronDecoder.frame(
                    type: type, product: 0xA389, counter: UInt16.random(in: 0...0xFFFF, using: &generator),
                    record: plain, key: context.bindKey ?? [])
                {
                    await record("victron", [VictronDecoder().reading(frame, context: context)])
                }
            }
        }
        // Xiaomi scales: every control byte, a weight, a set clock, a measured impedance.
        let clock: [UInt8] = [0xE9, 0x07, 0x01, 0x1E, 0x0C, 0x2E, 0x0A]
        for control in UInt8(0)...255 {
            await record("miscale_v1", [MiScaleDecoder().reading([control, 0xB0, 0x36] + clock)])
            await record(
                "miscale_v2",
                [MiScaleDecoder.bodyComposition.reading([control & 0x01, control] + clock + [0xF4, 0x01, 0xB0, 0x36])])
        }
        // Manufacturer-data families: company-id bytes of each kind and every length, with the names
        // they are recognised by (values up to 100, so INKBIRD's plausibility checks pass).
        let named: [(any AdvertisementDecoder, [String])] = [
            (GoveeDecoder(), ["GVH5101_0000", "H5182_0000", "H5185_0000"]), (ThermoProDecoder(), ["TP357"]),
            (InkbirdDecoder(), ["sps", "tps", "ith-11-b", "iBBQ"]),
        ]
        for (decoder, names) in named {
            for name in names {
                var withName = context
                withName.localName = name
                for company: [UInt8] in [[0x88, 0xEC], [0x01, 0x00], [0x01, 0x88], [0xC2, 0x10]] {
                    for length in 0...22 {
                        for _ in 0..<4 {
                            let data = (0..<length).map { _ in UInt8.random(in: 0...100, using: &generator) }
                            await record(decoder.name, [decoder.reading(company + data, context: withName)])
                        }
                    }
                }
            }
        }
        return seen.values.sorted { ($0.decoder, $0.name) < ($1.decoder, $1.name) }
    }

    static func shape(_ value: DecodedValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The problems Home Assistant has with one discovery payload; empty when it accepts it.
    static func problems(_ message: DiscoveryMessage) throws -> [String] {
        let config = try JSONParser().parse(message.payload)
        let component = message.topic.split(separator: "/")[1]
        var problems: [String] = []
        if config["object_id"] != nil { problems.append("has object_id") }
        if config["origin"]?["name"] == nil { problems.append("no origin") }
        if config["default_entity_id"]?.stringValue?.hasPrefix("\(component).") != true {
            problems.append("default_entity_id \(String(describing: config["default_entity_id"]))")
        }
        let deviceClass = config["device_class"]?.stringValue
        switch component {
        case "sensor":
            if let problem = HomeAssistantTables.sensorProblem(
                deviceClass: deviceClass, unit: config["unit_of_measurement"]?.stringValue,
                stateClass: config["state_class"]?.stringValue)
            {
                problems.append(problem)
            }
        case "binary_sensor":
            if let problem = HomeAssistantTables.binarySensorProblem(deviceClass: deviceClass) {
                problems.append(problem)
            }
            if config["state_class"] != nil || config["unit_of_measurement"] != nil {
                problems.append("a binary sensor with a state class or unit")
            }
        case "event":
            var types: [String] = []
            if case .array(let list)? = config["event_types"] { types = list.compactMap(\.stringValue) }
            if let problem = HomeAssistantTables.eventProblem(deviceClass: deviceClass, eventTypes: types) {
                problems.append(problem)
            }
            if config["value_template"]?.stringValue?.contains("event_type") != true {
                problems.append("an event template without event_type")
            }
        default:
            if deviceClass != nil { problems.append("device class on a \(component)") }
        }
        return problems
    }

    @Test func theDecodersProduceManyFields() async {
        // The random inputs reach deep: heart rate's optional fields, every BTHome object.
        let produced = await Self.produced()
        let names = Set(produced.map(\.name))
        #expect(produced.count > 150, "\(produced.count) fields")
        for name in [
            "energy_expended", "sensor_contact", "volume", "volume_storage", "tvoc", "conductivity", "gas",
            "sensor_error", "battery_low", "temperature_probe_6", "sensor_id", "impedance", "weight_removed",
            "button_left", "button_middle", "button_m", "button_heat", "dimmer", "dimmer_steps", "cube",
            "button_press_code", "cell_voltage_8", "balancer_status_code", "output_current_3", "output_state_code",
            "io_status", "meter_type_code", "input_current",
        ] {
            #expect(names.contains(name), "\(name) never produced")
        }
    }

    /// The decoders themselves declare what Home Assistant accepts (the builder would otherwise
    /// quietly drop a device class or change a state class to make it so).
    @Test func everyDecoderKindIsOneHomeAssistantAccepts() async {
        for field in await Self.produced() {
            let problem: String? =
                switch field.kind.component {
                case .sensor:
                    HomeAssistantTables.sensorProblem(
                        deviceClass: field.kind.deviceClass, unit: field.unit.map(HomeAssistantTables.canonicalUnit),
                        stateClass: field.kind.stateClass?.rawValue)
                case .binarySensor: HomeAssistantTables.binarySensorProblem(deviceClass: field.kind.deviceClass)
                case .event:
                    HomeAssistantTables.eventProblem(
                        deviceClass: field.kind.deviceClass, eventTypes: field.kind.eventTypes)
                        ?? (field.sample.stringValue.map { $0 == "none" || field.kind.eventTypes.contains($0) } == false
                            ? "event type \(field.sample) not in \(field.kind.eventTypes)" : nil)
                case .attribute: nil
                }
            #expect(problem == nil, "\(field.decoder).\(field.name) [\(field.unit ?? "-")]: \(problem ?? "")")
        }
    }

    @Test func everyFieldEntityPassesHomeAssistantsTables() async throws {
        var entities = 0
        for field in await Self.produced() {
            guard
                let message = builder.sensor(
                    device: device, field: field.name, sample: field.sample, unit: field.unit, kind: field.kind)
            else { continue }
            entities += 1
            let problems = try Self.problems(message)
            #expect(problems.isEmpty, "\(field.decoder).\(field.name): \(problems)")
        }
        #expect(entities > 100)
        // Fields without a decoder kind (classified by name and unit) as well.
        for (name, unit) in [("temperature", "%"), ("pm25", "µg/m³"), ("pressure", "hPa"), ("rssi", "dBm")] {
            let message = try #require(builder.sensor(device: device, field: name, sample: 1.5, unit: unit))
            let problems = try Self.problems(message)
            #expect(problems.isEmpty, "\(name) [\(unit)]: \(problems)")
        }
    }

    @Test func controlsAndBridgeEntitiesPassHomeAssistantsTables() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let configuration = try ConfigurationLoader().load(path: root.appendingPathComponent("config.json").path)
        let model = GatewayModel(configuration: configuration)
        let messages = model.controlDiscovery.values.flatMap { $0 } + builder.bridgeEntities()
        #expect(messages.count >= 8)
        for message in messages {
            let problems = try Self.problems(message)
            #expect(problems.isEmpty, "\(message.topic): \(problems)")
        }
    }

    @Test func theTablesRefuseWhatHomeAssistantRefuses() {
        #expect(HomeAssistantTables.sensorProblem(deviceClass: "temp", unit: "°C", stateClass: nil) != nil)
        #expect(HomeAssistantTables.sensorProblem(deviceClass: "temperature", unit: "%", stateClass: nil) != nil)
        #expect(
            HomeAssistantTables.sensorProblem(deviceClass: "volume", unit: "L", stateClass: "measurement") != nil)
        #expect(
            HomeAssistantTables.sensorProblem(deviceClass: "energy", unit: "kWh", stateClass: "total_increasing")
                == nil)
        #expect(HomeAssistantTables.sensorProblem(deviceClass: nil, unit: "furlongs", stateClass: "measurement") == nil)
        #expect(HomeAssistantTables.binarySensorProblem(deviceClass: "connected") != nil)
        #expect(HomeAssistantTables.canonicalUnit("µg/m³") == "μg/m³")
        #expect(HomeAssistantTables.defaultStateClass(deviceClass: "energy") == "total_increasing")
        #expect(HomeAssistantTables.defaultStateClass(deviceClass: "timestamp") == nil)
    }
}
