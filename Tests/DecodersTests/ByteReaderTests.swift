import Decoders
import Testing

@Suite struct ByteReaderTests {
    @Test func readsLittleEndianIntegersOfEveryWidth() throws {
        var reader = ByteReader(bytes("01 0201 030201 04030201 060504030201 0807060504030201"))
        #expect(try reader.uint8("a") == 0x01)
        #expect(try reader.uint16("b") == 0x0102)
        #expect(try reader.uint24("c") == 0x01_0203)
        #expect(try reader.uint32("d") == 0x0102_0304)
        #expect(try reader.uint48("e") == 0x0102_0304_0506)
        #expect(try reader.uint64("f") == 0x0102_0304_0506_0708)
        #expect(reader.isAtEnd)
    }

    @Test func readsSignedIntegersWithSignExtension() throws {
        var reader = ByteReader(bytes("ff feff feffff feffffff 7f ffffff7f"))
        #expect(try reader.int8("a") == -1)
        #expect(try reader.int16("b") == -2)
        #expect(try reader.int24("c") == -2)
        #expect(try reader.int32("d") == -2)
        #expect(try reader.int8("e") == 127)
        #expect(try reader.int32("f") == Int32.max)
    }

    @Test func readsBigEndian() throws {
        var reader = ByteReader(bytes("0102 fffe 01020304 800000"))
        #expect(try reader.uint16BE("a") == 0x0102)
        #expect(try reader.int16BE("b") == -2)
        #expect(try reader.uint32BE("c") == 0x0102_0304)
        #expect(try reader.signed(3, bigEndian: true, "d") == -8_388_608)
    }

    @Test func underrunNamesTheFieldAndOffset() {
        var reader = ByteReader(bytes("01 02"))
        let error = decoderError { () throws(DecoderError) in
            _ = try reader.uint8("flags")
            _ = try reader.uint16("heart_rate")
        }
        #expect(error?.code == .truncated)
        #expect(error?.field == "heart_rate")
        #expect(error?.offset == 1)
        #expect(reader.offset == 1, "a failed read consumes nothing")
    }

    @Test func skipStepsOverBytesAndNamesTheFieldOnUnderrun() throws {
        var reader = ByteReader([1, 2, 3, 4])
        try reader.skip(2, "padding")
        #expect(try reader.uint8("next") == 3)
        #expect(throws: DecoderError.self) { try reader.skip(2, "reserved") }
        #expect(reader.remaining == 1)
    }

    @Test func expectEndReportsTrailingBytes() {
        var reader = ByteReader(bytes("01 02 03"))
        let error = decoderError { () throws(DecoderError) in
            _ = try reader.uint8("a")
            try reader.expectEnd("thing")
        }
        #expect(error?.code == .trailingBytes)
        #expect(error?.offset == 1)
    }

    @Test(arguments: [
        // (raw SFLOAT, expected) — IEEE 11073-20601 §F.8, special values and signed exponent/mantissa.
        (UInt16(0x07FF), MedicalFloat.nan), (0x0800, .nres), (0x07FE, .positiveInfinity),
        (0x0802, .negativeInfinity), (0x0801, .reserved), (0x0078, .value(120)), (0xF16D, .value(36.5)),
        (0xFFFF, .value(-0.1)), (0x2001, .value(100)), (0x8001, .value(0.00000001)), (0x0FFF, .value(-1)),
    ])
    func decodesSFLOAT(raw: UInt16, expected: MedicalFloat) {
        #expect(MedicalFloat(sfloat: raw) == expected)
    }

    @Test(arguments: [
        (UInt32(0x007F_FFFF), MedicalFloat.nan), (0x0080_0000, .nres), (0x007F_FFFE, .positiveInfinity),
        (0x0080_0002, .negativeInfinity), (0x0080_0001, .reserved), (0xFE00_0E42, .value(36.5)),
        (0xFF00_03DA, .value(98.6)), (0x00FF_FFFF, .value(-1)), (0x0200_0001, .value(100)),
    ])
    func decodesFLOAT(raw: UInt32, expected: MedicalFloat) {
        #expect(MedicalFloat(float: raw) == expected)
    }

    @Test func specialMedicalValuesBecomeJSONNull() throws {
        var reader = ByteReader(bytes("ff07 ffff7f00"))
        #expect(try reader.sfloat("a").decodedValue == .null)
        #expect(try reader.medicalFloat("b").description == "NaN")
    }

    @Test func readsIEEE754Float32() throws {
        var reader = ByteReader(bytes("0000c03f 3fc00000"))
        #expect(try reader.float32("a") == 1.5)
        #expect(try reader.float32(bigEndian: true, "b") == 1.5)
    }

    @Test func readsUTF8AndRejectsInvalidSequences() throws {
        var reader = ByteReader(Array("Polar".utf8) + [0, 0])
        #expect(try reader.utf8("name") == "Polar")
        var bad = ByteReader(bytes("41 c3"))
        let error = decoderError { () throws(DecoderError) in _ = try bad.utf8(count: 2, "model_number") }
        #expect(error?.code == .invalidValue)
        #expect(error?.field == "model_number")
    }
}
