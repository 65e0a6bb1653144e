import Bluetooth
import Testing

@Suite struct HexTests {
    @Test func acceptsCommonSpellingsAndRejectsGarbage() {
        #expect(Hex.bytes("0x1648") == [0x16, 0x48])
        #expect(Hex.bytes("16:48 0A-0b") == [0x16, 0x48, 0x0A, 0x0B])
        #expect(Hex.bytes("") == [])
        #expect(Hex.bytes("164") == nil)
        #expect(Hex.bytes("zz") == nil)
        #expect(Hex.string([0x00, 0xAB]) == "00ab")
        #expect(Hex.string([0x16, 0x48], separator: " ") == "16 48")
    }

    /// Contiguous bytes take a faster path than other sequences: both spell every byte alike.
    @Test func contiguousAndOtherSequencesGiveTheSameText() {
        let bytes = (0...255).map(UInt8.init) + [0x00, 0x0F, 0xF0]
        let expected = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(Hex.string(bytes) == expected)
        #expect(Hex.string(bytes[...]) == expected)
        #expect(Hex.string(bytes.lazy.map { $0 }) == expected)
        #expect(Hex.string(Set([UInt8(0xAB)])) == "ab")
        #expect(Hex.string([UInt8]()) == "")
    }
}
