import Foundation
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
            #expect(error.kind == .numberOutOfRange)
            #expect(error.reason == "1e400 is out of range; expected a finite number")
            #expect(error.path == [JSONKey("a")])
        }
        #expect(try parser.parse("1e308") == .double(1e308))
        #expect(try parser.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
    }

    /// Issue 19: keys are compared byte for byte, with no Unicode normalization: `é` and `e` with a
    /// combining accent are two keys (Swift's `==` calls them equal). A key of one letter and 7,000
    /// accents parses, is found, and serializes back unchanged.
    @Test func keysAreComparedByTheirBytes() throws {
        let value = try parser.parse("{\"\u{E9}\":1,\"e\u{301}\":2}")
        #expect(value.objectMembers?.count == 2)
        #expect(value["\u{E9}"] == .int(1))
        #expect(value["e\u{301}"] == .int(2))
        #expect(throws: JSONParser.Failure.self) { try parser.parse("{\"e\u{301}\":1,\"e\u{301}\":2}") }
        let cluster = "a" + String(repeating: "\u{301}", count: 7_000)
        let text = #"{"\#(cluster)":"\#(cluster)\n","transaction":2}"#
        let big = try parser.parse(text)
        #expect(big["transaction"] == .int(2))
        #expect(big[cluster] == .string(cluster + "\n"))
        #expect(big.serialized == text)
        #expect(big.bytes == Array(text.utf8))
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

    /// The strict toolkit the configuration, layouts and scenarios share (issue 20): a failure
    /// names the key path of the value where it happened, by kind.
    @Test func aFailureCarriesItsKindAndKeyPath() {
        let cases: [(String, JSONParser.Failure.Kind, String, Int)] = [
            (#"{"devices": [{"name": "a"}, {"name": tru}]}"#, .syntax, "devices[1].name", 37),
            (#"{"a": {"b": 1, "b": 2}}"#, .duplicateKey, "a.b", 15),
            (#"[[], [1, 2,]]"#, .syntax, "[1]", 11),
            (#"{"a": 1 // note"#, .syntax, "", 8),
        ]
        for (text, kind, path, offset) in cases {
            do {
                _ = try parser.parse(text)
                Issue.record("parsed \(text)")
            } catch {
                #expect(error.kind == kind, "\(text)")
                #expect(JSONKey.path(error.path) == path, "\(text): \(error.reason)")
                #expect(error.offset == offset, "\(text): \(error.reason)")
            }
        }
    }

    /// Messages say what was found and what was expected, for a person editing a file.
    @Test(arguments: [
        ("{\"a\": 1,}", "trailing comma before '}'"),
        ("[1,]", "trailing comma before ']'"),
        ("{'a': 1}", "expected a key in double quotes"),
        ("{\"a\": 'x'}", "strings must use double quotes"),
        ("{\"a\": 1 \"b\": 2}", "is a comma missing?"),
        ("{\"a\" 1}", "expected ':' after the key \"a\""),
        ("{\"a\": True}", "unexpected 'T'; expected a value"),
        ("{\"a\": tru}", "did you mean true?"),
        ("{\"a\": 01}", "numbers must not start with 0"),
        ("{\"a\": \"x\ny\"}", "a line break inside a string must be written \\n"),
        ("{\"a\": \"\\q\"}", "invalid escape \\q in a string"),
        ("{} x", "unexpected 'x' after the end of the JSON value"),
        ("", "unexpected end of input; expected a value"),
    ])
    func failuresSayWhatWasExpected(_ text: String, _ mentions: String) {
        do {
            _ = try parser.parse(text)
            Issue.record("parsed \(text)")
        } catch {
            #expect(error.reason.contains(mentions), "\(text): \(error.reason)")
        }
    }

    /// Files decoded into Swift integers refuse an integer beyond Int64, where JSONDecoder would
    /// fail without saying where; payloads take it as a Double.
    @Test func largeIntegersAreRefusedWhenAsked() throws {
        let text = #"{"n": 9223372036854775808}"#
        #expect(try parser.parse(text)["n"] == .double(9_223_372_036_854_775_808))
        #expect(try JSONParser(largeIntegers: .refused).parse(#"{"n": 9223372036854775807}"#)["n"] == .int(.max))
        do {
            _ = try JSONParser(largeIntegers: .refused).parse(text)
            Issue.record("accepted an integer beyond Int64")
        } catch {
            #expect(error.kind == .numberOutOfRange)
            #expect(error.offset == 6)
            #expect(error.path == [JSONKey("n")])
        }
    }

    /// `maximumDepth` counts the objects and lists open at once.
    @Test func theDepthLimitCountsOpenContainers() {
        let parser = JSONParser(maximumDepth: 3)
        #expect((try? parser.parse("[[[1]]]")) != nil)
        do {
            _ = try parser.parse("[[[[1]]]]")
            Issue.record("parsed four levels with a limit of three")
        } catch {
            #expect(error.kind == .tooDeep)
            #expect(error.reason == "nested more than 3 levels deep")
        }
    }

    /// An unknown key is thrown as a `DecodingError` whose underlying error says which, with a
    /// suggestion, so callers need not read the message.
    @Test func unknownKeysAreRejectedWithASuggestion() throws {
        struct Point: Decodable {
            enum CodingKeys: String, CodingKey, CaseIterable { case x, y }
            var x: Int
            init(from decoder: any Decoder) throws {
                try decoder.rejectUnknownKeys(CodingKeys.self)
                x = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .x)
            }
        }
        #expect(try JSONDecoder().decode(Point.self, from: Data(#"{"x": 1, "y": 2}"#.utf8)).x == 1)
        do {
            _ = try JSONDecoder().decode([Point].self, from: Data(#"[{"x": 1}, {"x": 1, "Y ": 2}]"#.utf8))
            Issue.record("accepted an unknown key")
        } catch DecodingError.dataCorrupted(let context) {
            let unknown = context.underlyingError as? JSONUnknownKey
            #expect(unknown == JSONUnknownKey(key: "Y ", accepted: ["x", "y"]))
            #expect(unknown?.suggestion == "y")
            #expect(JSONKey.path(context.codingPath) == "[1].Y ")
            #expect(context.debugDescription == #"unknown key "Y " (did you mean "y"?); accepted keys here: x, y"#)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
