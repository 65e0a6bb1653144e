import Gateway
import Testing

@Suite struct VersionTests {
    @Test func versionIsSemantic() {
        let parts = BLEBridgeVersion.string.split(separator: ".")
        #expect(parts.count == 3)
        #expect(parts.allSatisfy { Int($0) != nil })
    }
}
