import JSON
import Testing

@Suite struct JSONTests {
    let parser = JSONParser()

    @Test func roundTripsKeepingKeyOrder() throws {
        let text = #"{"b":1,"a":[true,false,null],"c":{"x":-2.5,"y":"é\n\"q\""},"d":1e3}"#
        let value = try parser.parse(text)
        #expect(value["b"] == .int(1))
        #expect(value["d"] == .double(1000))
        #expect(value.serialized == #"{"b":1,"a":[true,false,null],"c":{"x":-2.5,"y":"é\n\"q\""},"d":1000}"#)
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        #expect(try parser.parse(#""\u00e9\ud83d\ude00\/""#) == .string("é😀/"))
    }

    @Test(arguments: [
        "", "{", "{\"a\":}", "[1,]", "{\"a\":1,}", "01", "1.", "-", "tru", "\"abc", "{\"a\":1}x", "{a:1}",
        "\"\u{01}\"", "{\"a\":1,\"a\":2}", "\"\\ud800\"", "nul",
    ])
    func rejectsMalformedInput(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try parser.parse(text) }
    }

    @Test func rejectsInvalidUTF8AndDeepNesting() {
        #expect(throws: JSONParser.Failure.self) { try parser.parse([0x22, 0xFF, 0x22]) }
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(throws: JSONParser.Failure.self) { try parser.parse(deep) }
        #expect((try? parser.parse(String(repeating: "[", count: 10) + String(repeating: "]", count: 10))) != nil)
    }

    /// Found by `fuzz-json` (make fuzz): 79 characters of digits with an exponent after the 42nd parsed to
    /// infinity, which serialises as `null`, so an accepted document changed meaning when written
    /// back. Numbers beyond Double's range are refused, with the offset where they start.
    @Test(arguments: [
        "1e400", "-1e400", "[1,1e999]",
        String(repeating: "1", count: 42) + "e" + String(repeating: "1", count: 35) + "0",
    ])
    func rejectsNumbersBeyondDoubleRange(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try parser.parse(text) }
    }

    @Test func reportsWhereAnOutOfRangeNumberStarts() throws {
        do {
            _ = try parser.parse(#"{"a":1e400}"#)
            Issue.record("1e400 was accepted")
        } catch {
            #expect(error.offset == 5)
            #expect(error.reason == "number out of range")
        }
        #expect(try parser.parse("1e308") == .double(1e308))
        #expect(try parser.parse("123456789012345678901234567890") == .double(123_456_789_012_345_678_901_234_567_890))
    }

    @Test func serializesControlCharactersAndNonFiniteNumbers() {
        #expect(JSONValue.string("a\u{01}b\tc").serialized == #""a\u0001b\tc""#)
        #expect(JSONValue.double(.nan).serialized == "null")
        #expect(JSONValue.double(72).serialized == "72")
        #expect(JSONValue.double(0.81).serialized == "0.81")
    }

    /// A failure's line and column count characters, not bytes: `é` and `→` are one column each.
    @Test func aFailureIsLocatedByLineAndColumn() throws {
        let text = "{\n  \"é→\": [1,\n   ,]\n}"
        let bytes = Array(text.utf8)
        do {
            _ = try JSONParser().parse(bytes)
            Issue.record("parsed invalid JSON")
        } catch {
            #expect(error.location(in: bytes) == (line: 3, column: 4))
        }
        let sameLine = Array(#"{"é→": x}"#.utf8)
        do {
            _ = try JSONParser().parse(sameLine)
            Issue.record("parsed invalid JSON")
        } catch {
            #expect(error.location(in: sameLine) == (line: 1, column: 8))
        }
    }
}
