import DBus
import Testing

/// `DBusWireMessage`: whole messages in wire format go through libdbus's validation and the
/// module's decoder (the path of every received message; the `fuzz-dbus-message` harness's entry).
@Suite struct DBusWireMessageTests {
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }

    /// A little-endian signal `/f f.z.m` with the body `s "hello"`.
    static let littleEndianString = bytes(
        "6c0400010a000000010000003700000001016f00020000002f660000000000000201730003000000662e7a00"
            + "0000000003017300010000006d0000000000000008016700017300000500000068656c6c6f00")

    /// The same signal big-endian with the body `ay [1, 2, 3]`.
    static let bigEndianBytes = bytes(
        "4204000100000007000000010000003801016f00000000022f660000000000000201730000000003662e7a00"
            + "0000000003017300000000016d00000000000000080167000261790000000003010203")

    @Test func decodesTheArgumentsOfAMessageInEitherByteOrder() throws {
        #expect(try DBusWireMessage.arguments(of: Self.littleEndianString) == [.string("hello")])
        #expect(try DBusWireMessage.arguments(of: Self.bigEndianBytes) == [.bytes([1, 2, 3])])
    }

    @Test func refusesTruncatedCorruptAndEmptyMessages() {
        for cut in [0, 1, 15, 16, Self.littleEndianString.count - 1] {
            #expect(throws: DBusError.self) {
                try DBusWireMessage.arguments(of: Array(Self.littleEndianString.prefix(cut)))
            }
        }
        var badUTF8 = Self.littleEndianString
        badUTF8[badUTF8.count - 2] = 0xFF
        #expect(throws: DBusError.self) { try DBusWireMessage.arguments(of: badUTF8) }
    }
}
