import Testing

@testable import Gateway

/// Issue 19, D12: refused commands were logged with their full value (23 MB of log in one attack run).
@Suite struct CommandRefusalLogTests {
    @Test func topicAndReasonAreCutTo200Characters() {
        let value = String(repeating: "A", count: 65_000)
        let fields = Gateway.refusalMetadata(
            topic: "blebridge/" + value + "/set", code: "invalid_value", reason: "value \"\(value)\" is not allowed")
        let byKey = Dictionary(uniqueKeysWithValues: fields)
        #expect(byKey["code"] == "invalid_value")
        for key in ["topic", "reason"] {
            let text = byKey[key] ?? ""
            #expect(text.count < 230, "\(key): \(text.count) characters")
            #expect(text.hasSuffix("bytes)"), "\(key)")
        }
        #expect(Gateway.refusalMetadata(topic: "blebridge/lamp/set", code: "c", reason: "short")[2].1 == "short")
    }

    /// The cut counts Unicode scalars, not characters: one character can hold thousands of
    /// scalars (a letter and combining accents; CR LF pairs), which a character count let through.
    @Test func oneCharacterOfManyScalarsIsCutToo() {
        let accents = "a" + String(repeating: "\u{301}", count: 7_000)
        let crlf = String(repeating: "\r\n", count: 5_000)
        for text in [accents, crlf, "'" + accents + "' is not a writable command of lamp"] {
            let cut = Gateway.truncated(text)
            #expect(cut.unicodeScalars.count <= 200 + 20, "\(cut.unicodeScalars.count) scalars")
            #expect(cut.hasSuffix("…(\(text.utf8.count) bytes)"))
        }
        let exactly = String(repeating: "\u{301}", count: 200)
        #expect(Gateway.truncated(exactly) == exactly)
    }
}
