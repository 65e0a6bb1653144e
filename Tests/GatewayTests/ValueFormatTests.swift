import Gateway
import JSON
import Testing

@Suite struct ValueFormatTests {
    @Test func encodesBooleansInEveryAcceptedSpelling() throws {
        let format = ValueFormat(.bool)
        for (value, byte) in [
            (JSONValue.bool(true), UInt8(1)), (.bool(false), 0), (.int(1), 1), (.string("ON"), 1), (.string("off"), 0),
        ] {
            #expect(try format.encode(value).get() == [byte])
        }
        #expect(format.encode(.int(2)).failureCode == .invalidValue)
        #expect(format.encode(.string("maybe")).failureCode == .invalidValue)
    }

    @Test func encodesIntegersLittleEndianWithinBounds() throws {
        #expect(try ValueFormat(.uint16).encode(.int(0x1234)).get() == [0x34, 0x12])
        #expect(try ValueFormat(.int16).encode(.int(-2)).get() == [0xFE, 0xFF])
        #expect(try ValueFormat(.uint8, minimum: 0, maximum: 100).encode(.double(50)).get() == [50])
        #expect(ValueFormat(.uint8, minimum: 0, maximum: 100).encode(.int(101)).failureCode == .invalidValue)
        #expect(ValueFormat(.uint8).encode(.int(-1)).failureCode == .invalidValue)
        #expect(ValueFormat(.uint8).encode(.double(1.5)).failureCode == .invalidValue)
        #expect(ValueFormat(.uint8).encode(.string("5")).failureCode == .invalidValue)
    }

    @Test func encodesAlertLevelsHexAndText() throws {
        #expect(try ValueFormat(.alertLevel).encode("high").get() == [2])
        #expect(try ValueFormat(.alertLevel).encode(.int(1)).get() == [1])
        #expect(ValueFormat(.alertLevel).encode("loud").failureCode == .invalidValue)
        #expect(try ValueFormat(.hex).encode("01fF").get() == [0x01, 0xFF])
        #expect(ValueFormat(.hex).encode("0g").failureCode == .invalidValue)
        #expect(ValueFormat(.hex).encode("012").failureCode == .invalidValue)
        #expect(try ValueFormat(.utf8, maximumLength: 4).encode("abcd").get() == Array("abcd".utf8))
        #expect(ValueFormat(.utf8, maximumLength: 4).encode("abcde").failureCode == .valueTooLong)
        #expect(ValueFormat(.hex).encode(.string(String(repeating: "00", count: 513))).failureCode == .valueTooLong)
    }

    @Test func decodesReadValuesBack() {
        #expect(ValueFormat(.bool).decode([1]) == .bool(true))
        #expect(ValueFormat(.uint8).decode([80]) == .int(80))
        #expect(ValueFormat(.int16).decode([0xFE, 0xFF]) == .int(-2))
        #expect(ValueFormat(.uint16).decode([0x34]) == nil)
        #expect(ValueFormat(.alertLevel).decode([2]) == "high")
        #expect(ValueFormat(.hex).decode([0x01, 0xAB]) == "01ab")
        #expect(ValueFormat(.utf8).decode(Array("hi".utf8)) == "hi")
    }

    @Test func tokenBucketAllowsBurstThenRate() {
        var bucket = TokenBucket(rate: 5)
        let start = ContinuousClock.now
        let admitted = (0..<10).filter { _ in bucket.take(at: start) }.count
        #expect(admitted == 5)
        #expect(bucket.take(at: start + .milliseconds(100)) == false)
        #expect(bucket.take(at: start + .milliseconds(210)) == true)
        #expect(bucket.take(at: start + .seconds(10)) == true)
    }
}

extension Result where Failure == CommandFailure {
    var failureCode: CommandErrorCode? {
        if case .failure(let failure) = self { return failure.code }
        return nil
    }
}
