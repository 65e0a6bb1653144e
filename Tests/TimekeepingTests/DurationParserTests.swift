import Testing
import Timekeeping

@Suite struct DurationParserTests {
    @Test func acceptsTheDocumentedForms() {
        #expect(DurationParser.parse("30s") == .seconds(30))
        #expect(DurationParser.parse("10m") == .seconds(600))
        #expect(DurationParser.parse("7d") == .seconds(7 * 86400))
        #expect(DurationParser.parse("250ms") == .milliseconds(250))
        #expect(DurationParser.parse("1h30m") == .seconds(5400))
    }

    @Test(arguments: ["", "s", "30", "10x", "-5s", "1.5s", "ms"])
    func rejectsEverythingElse(_ text: String) {
        #expect(DurationParser.parse(text) == nil)
    }

    @Test func formatsInTheLargestExactUnit() {
        #expect(DurationParser.format(.seconds(600)) == "10m")
        #expect(DurationParser.format(.milliseconds(250)) == "250ms")
        #expect(DurationParser.format(.seconds(45)) == "45s")
    }
}
