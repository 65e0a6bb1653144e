import Bluetooth
import ByteLayouts
import Decoders
import Foundation
import Testing

/// A million random byte strings, spread over every decoder, never crash and only produce a
/// typed error (naming a field, raw bytes kept) or well-formed output (named fields, valid JSON).
/// The generator is seeded, so a failure reproduces; the seed and input are in the message.
@Suite struct RandomInputTests {
    static let total = 1_000_000

    /// One target: a name and a function from random bytes to a reading.
    struct Target: Sendable, CustomTestStringConvertible {
        var name: String
        /// Optional header bytes that steer half of the inputs into the format's deeper paths.
        var prefixes: [[UInt8]]
        var decode: @Sendable ([UInt8]) -> [DecodedReading]
        var testDescription: String { name }
    }

    static let bthomeContext = AdvertisementContext(
        address: BluetoothAddress("54:48:E6:8F:80:A5"), bindKey: bytes("231d39c1d7cc1ab1aee224cd096db932"))

    /// Names the decoders that need one recognise (INKBIRD, ThermoPro, Govee on 0x0001), chosen
    /// by the input's last byte so that every name meets every length.
    static let localNames = ["sps", "tps", "ith-11-b", "iBBQ", "TP357", "GVH5101_0000", "other"]

    static func namedContext(_ input: [UInt8]) -> AdvertisementContext {
        var context = bthomeContext
        context.localName = localNames[Int(input.last ?? 0) % localNames.count]
        return context
    }

    static let targets: [Target] = {
        var targets: [Target] = DecoderRegistry.builtInCharacteristics.map { decoder in
            Target(name: decoder.name, prefixes: [[0x1F], [0xFF, 0x1F], [0x07]]) { [decoder.reading($0)] }
        }
        for decoder in DecoderRegistry.builtInAdvertisements {
            let prefixes: [[UInt8]] =
                switch decoder.name {
                case "bthome": [[0x40], [0x41], [0x44], [0x42]]
                case "ibeacon": [[0x02, 0x15]]
                case "eddystone": [[0x00], [0x10], [0x20, 0x00], [0x30]]
                case "ruuvi": [[0x05], [0x03]]
                case "bthome_v1": [[0x23, 0x02], [0xA5, 0x50], [0x43, 0x06], [0x08, 0x00], [0x02, 0x3A]]
                case "govee": [[0x88, 0xEC, 0x00], [0x01, 0x00, 0x01, 0x01], [0x01, 0x88]]
                case "thermopro": [[0xC2]]
                case "switchbot", "switchbot_0d00": [[0x54], [0x77], [0x35], [0x64], [0x73], [0x48]]
                case "qingping": [[0x08, 0x12, 1, 2, 3, 4, 5, 6], [0x48, 0x12, 1, 2, 3, 4, 5, 6, 0x08, 0x04]]
                case "sensorpush": [[0x00], [0x04], [0x08]]
                case "oralb": [[0x03, 0x20, 0x01, 0x03], [0x04, 0x35, 0x10, 0x02]]
                case "mopeka": [[0x59, 0x00, 0x03], [0x59, 0x00, 0x0C]]
                // A product advertisement of each record type whose key byte is the context key's.
                case "victron":
                    ([1, 2, 3, 4, 5, 8, 9, 0x0A, 0x0D, 0x0F] as [UInt8]).map {
                        [0x10, 0x02, 0x89, 0xA3, $0, 0x00, 0x00, 0x23]
                    }
                // A weight and a valid clock, so the rest decides (the scales take one length).
                case "miscale_v1": [[0x22, 0xB0, 0x36, 0xE9, 0x07, 0x01, 0x1E, 0x0C, 0x2E]]
                case "miscale_v2": [[0x02, 0x22, 0xE9, 0x07, 0x01, 0x1E, 0x0C, 0x2E, 0x0A]]
                default: [[]]
                }
            targets.append(
                Target(name: decoder.name, prefixes: prefixes) { [decoder.reading($0, context: namedContext($0))] })
        }
        targets.append(Target(name: "layout", prefixes: [[]]) { [ByteLayoutTests.layout.reading($0)] })
        targets.append(Target(name: "raw", prefixes: [[]]) { [RawDecoder().reading($0)] })
        targets.append(
            Target(name: "registry.advertisement", prefixes: [[0x40], [0x02, 0x15], [0x05]]) { payload in
                DecoderRegistry.standard.decodeAdvertisement(
                    serviceData: [
                        BluetoothUUID(UInt16(0xFCD2)): payload, BluetoothUUID(UInt16(0x181A)): payload,
                        BluetoothUUID(UInt16(0xFEAA)): payload, BluetoothUUID(UInt16(0x181C)): payload,
                        BluetoothUUID(UInt16(0x181E)): payload,
                    ],
                    manufacturerData: [0x004C: payload, 0x0499: payload, 0xEC88: payload, 0x0001: payload],
                    context: namedContext(payload))
            })
        return targets
    }()

    @Test(arguments: targets)
    func randomBytesNeverCrash(_ target: Target) async {
        let count = Self.total / Self.targets.count
        var generator = SeededRandomNumberGenerator(seed: UInt64(truncatingIfNeeded: target.name.hashValueStable))
        var successes = 0
        var failures = 0
        for iteration in 0..<count {
            // A CPU-bound loop must not hold a cooperative thread for seconds: other suites'
            // awaits (child processes, brokers, time-outs) run on the same two threads.
            if iteration % 1024 == 0 { await Task.yield() }
            var input: [UInt8] = []
            if iteration % 2 == 0 {
                input = target.prefixes.randomElement(using: &generator) ?? []
            }
            let length = Int(generator.next() % 28)
            for _ in 0..<length { input.append(UInt8(truncatingIfNeeded: generator.next())) }
            for reading in target.decode(input) {
                // Plain checks in the loop (the #expect machinery would dominate the run time);
                // the first bad output is recorded with its input and the test stops.
                var problem: String?
                // Decoders of any company id keep the company-id bytes the registry put first.
                let companyPrefixed =
                    target.name == "registry.advertisement" && Array(reading.raw.dropFirst(2)) == input
                if reading.raw != input && !companyPrefixed {
                    problem = "raw bytes not kept"
                } else if let error = reading.error {
                    failures += 1
                    if error.field.isEmpty || error.message.isEmpty { problem = "error without field or message" }
                } else {
                    successes += 1
                    if reading.fields.contains(where: { $0.name.isEmpty }) { problem = "field without a name" }
                }
                if problem == nil, iteration % 997 == 0 {
                    // Full JSON validity on a sample (parsing every output would dominate the run time).
                    let text = reading.jsonString(includeRaw: true)
                    let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8))
                    if !(parsed is [String: Any]) { problem = "invalid JSON: \(text)" }
                }
                if let problem {
                    Issue.record("\(target.name) input \(Hex.string(input)): \(problem)")
                    return
                }
            }
        }
        // The random inputs reach both outcomes, so the test exercises decoding, not only rejection.
        // Random bytes never authenticate as encrypted BTHome v1; BTHomeTests seals random plaintexts
        // to reach its object parser.
        #expect(successes > 0 || target.name == "bthome_v1_encrypted", "\(target.name) never decoded a random input")
        #expect(failures > 0 || target.name == "raw", "\(target.name) never rejected a random input")
    }
}

extension String {
    /// A hash that is the same in every run (Swift's `hashValue` is randomly seeded per process).
    fileprivate var hashValueStable: UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        return hash
    }
}
