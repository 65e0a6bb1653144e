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
}
