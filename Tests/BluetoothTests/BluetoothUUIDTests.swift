import Bluetooth
import Foundation
import Testing

@Suite struct BluetoothUUIDTests {
    @Test func shortFormsEqualTheirFullForm() throws {
        let short = try #require(BluetoothUUID("180D"))
        let full = try #require(BluetoothUUID("0000180d-0000-1000-8000-00805f9b34fb"))
        #expect(short == full)
        #expect(short == BluetoothUUID(UInt16(0x180D)))
        #expect(BluetoothUUID("0x180d") == short)
        #expect(BluetoothUUID("0000180D") == short)
        #expect(short.shortValue == 0x180D)
        #expect(short.description == "180d")
        #expect(full.uuidString == "0000180d-0000-1000-8000-00805f9b34fb")
    }

    @Test func vendorUUIDsKeepAll128Bits() throws {
        let text = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
        let uuid = try #require(BluetoothUUID(text))
        #expect(uuid.uuidString == text)
        #expect(uuid.shortValue == nil)
        #expect(uuid.description == text)
        #expect(BluetoothUUID(littleEndianBytes: uuid.littleEndianBytes) == uuid)
    }

    @Test(arguments: [
        "", "18", "180G", "0x", "12345", "6e400001-b5a3-f393-e0a9-e50e24dcca9", "6e400001b5a3-f393-e0a9-e50e24dcca9e0",
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(BluetoothUUID(text) == nil)
    }

    /// The 36-character form is read in place; it gives what the general parse (the reference
    /// below, the parser before 2026-12-04) gives, for that form and anything near it.
    @Test func theCanonicalFormParsesAsTheGeneralParseDoes() {
        func reference(_ text: String) -> BluetoothUUID? {
            var hex = Substring(text)
            if hex.hasPrefix("0x") || hex.hasPrefix("0X") { hex = hex.dropFirst(2) }
            switch hex.count {
            case 4, 8:
                guard let value = UInt32(hex, radix: 16), hex.allSatisfy(\.isHexDigit) else { return nil }
                return BluetoothUUID(value)
            case 36:
                let parts = hex.split(separator: "-", omittingEmptySubsequences: false)
                guard parts.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
                let digits = parts.joined()
                guard digits.allSatisfy(\.isHexDigit), let high = UInt64(digits.prefix(16), radix: 16),
                    let low = UInt64(digits.suffix(16), radix: 16)
                else { return nil }
                return BluetoothUUID(high: high, low: low)
            case 32:
                guard hex.allSatisfy(\.isHexDigit), let high = UInt64(hex.prefix(16), radix: 16),
                    let low = UInt64(hex.suffix(16), radix: 16)
                else { return nil }
                return BluetoothUUID(high: high, low: low)
            default: return nil
            }
        }
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEFgG-x \u{FF10}\u{0661}")
        var candidates = ["0000FCD2-0000-1000-8000-00805F9B34FB", "6e400001-b5a3-f393-e0a9-e50e24dcca9e"]
        for _ in 0..<20_000 {
            let text =
                Bool.random(using: &random)
                ? "0000fcd2-0000-1000-8000-00805f9b34fb" : "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
            candidates.append(mutated(text, edits: 0...2, from: alphabet))
        }
        for text in candidates {
            #expect(BluetoothUUID(text) == reference(text), "\(text.debugDescription)")
        }
    }

    @Test func littleEndianOnAirForms() {
        #expect(BluetoothUUID(littleEndianBytes: [0x0D, 0x18]) == BluetoothUUID(UInt16(0x180D)))
        #expect(BluetoothUUID(littleEndianBytes: [0x0D, 0x18, 0, 0]) == BluetoothUUID(UInt16(0x180D)))
        #expect(BluetoothUUID(littleEndianBytes: [1, 2, 3]) == nil)
    }
}

@Suite struct BluetoothAddressTests {
    @Test func parsesAndPrints() throws {
        let address = try #require(BluetoothAddress("aa:bb:cc:dd:ee:0f"))
        #expect(address.string == "AA:BB:CC:DD:EE:0F")
        #expect(address.bluezPathComponent == "dev_AA_BB_CC_DD_EE_0F")
        #expect(BluetoothAddress("AA:BB:CC:DD:EE") == nil)
        #expect(BluetoothAddress("AA:BB:CC:DD:EE:GG") == nil)
        #expect(BluetoothAddress("C0:00:00:00:00:01", type: .random)?.randomSubtype == .staticAddress)
    }

    /// The parser reads UTF-8 bytes in place; it accepts exactly what splitting the string on its
    /// separators accepted (the reference below, the parser before 2026-12-04), and printing gives
    /// back what was parsed.
    @Test func parsesExactlyWhatSplittingOnTheSeparatorsAccepts() throws {
        func reference(_ text: String) -> [UInt8]? {
            guard Set(text.filter { $0 == ":" || $0 == "-" }).count <= 1 else { return nil }
            let parts = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == ":" || $0 == "-" })
            guard parts.count == 6 else { return nil }
            var bytes: [UInt8] = []
            for part in parts {
                guard part.count == 2, part.allSatisfy({ $0.isHexDigit }), let byte = UInt8(part, radix: 16) else {
                    return nil
                }
                bytes.append(byte)
            }
            return bytes
        }
        var candidates = [
            "C0:FF:EE:00:00:01", "c0-ff-ee-00-00-01", "C0-FF:EE-00:00-01", "C0:FF:EE:00:00:0", "C0:FF:EE:00:00:011",
            ":C0:FF:EE:00:00", "C0::FF:EE:00:00:01", "C0:FF:EE:00:00:0G", "C0:FF:EE:00:00:\u{FF10}1",
            "C0:FF:EE:00:00:+1", "C0:FF:EE:00:00:\u{0661}1", "C0:FF:EE:00:00:1\u{301}", "C0.FF.EE.00.00.01",
            "C0:FF:EE:00:00:01:", "", "C0 FF EE 00 00 01", "C0:FF:EE:00:00:-1",
        ]
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEFgG:-. \u{FF10}\u{0661}")
        for _ in 0..<20_000 {
            candidates.append(mutated("C0:FF:EE:12:34:56", edits: 1...3, from: alphabet))
        }
        for text in candidates {
            #expect(BluetoothAddress(text)?.bytes == reference(text), "\(text.debugDescription)")
        }
        for _ in 0..<1_000 {
            let bytes = (0..<6).map { _ in UInt8.random(in: 0...255, using: &random) }
            let address = try #require(BluetoothAddress(bytes: bytes))
            #expect(address.string == bytes.map { String(format: "%02X", $0) }.joined(separator: ":"))
            #expect(BluetoothAddress(address.string)?.bytes == bytes)
        }
    }
}

/// `text` with a few random edits (a character replaced, inserted or removed), for differential
/// tests of the parsers that read UTF-8 in place. It owns its generator: a zero-sized
/// `SystemRandomNumberGenerator` passed `inout` to a generic parameter crashed ThreadSanitizer's
/// access instrumentation (SEGV in `__tsan::ExternalAccess`, `make sanitize` of 8cb10cb).
private func mutated(_ text: String, edits: ClosedRange<Int>, from alphabet: [Character]) -> String {
    var random = SystemRandomNumberGenerator()
    var characters = Array(text)
    for _ in 0..<Int.random(in: edits, using: &random) {
        switch Int.random(in: 0..<3, using: &random) {
        case 0 where !characters.isEmpty:
            characters[Int.random(in: 0..<characters.count, using: &random)] = alphabet.randomElement(using: &random)!
        case 2 where !characters.isEmpty: characters.remove(at: Int.random(in: 0..<characters.count, using: &random))
        default:
            characters.insert(
                alphabet.randomElement(using: &random)!, at: Int.random(in: 0...characters.count, using: &random))
        }
    }
    return String(characters)
}
