import Decoders
import Foundation
import TestSupport
import Testing

/// The differential suite: scripts/differential/oracle.py generates a seeded corpus per family and
/// decodes it with Home Assistant's reference parsers (xiaomi-ble, bthome-ble, govee-ble, thermopro-ble,
/// inkbird-ble; pinned in
/// scripts/setup.sh, `.build/venv-oracles`); BLEBridge decodes the same bytes and every payload is
/// a match, a listed known disagreement (``KnownDisagreement``) or a failure. The report per
/// family is printed (docs/testing.md).
@Suite struct DifferentialSuiteTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let payloadsPerFamily = 10_000
    static let families = ["mibeacon", "bthome"] + DifferentialComparison.manufacturerFamilies + advertisementFamilies
    /// Advertisement decoders with no pinned reference parser yet.
    static let withoutOracle = ["bthome_v1", "bthome_v1_encrypted", "ibeacon", "eddystone", "ruuvi", "pvvx", "atc1441"]

    struct FamilyReport {
        var payloads = 0
        var matches = 0
        /// Matches where the reference reported nothing (a wrong key, a cut frame) and BLEBridge
        /// published nothing comparable either.
        var bothRejected = 0
        var known: [String: Int] = [:]
        var unexpected: [String] = []
        var cases: [String: Int] = [:]
    }

    @Test func decodersAgreeWithTheReferenceParsers() async throws {
        let python = Self.root.appendingPathComponent(".build/venv-oracles/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record("the reference parsers are not installed in .build/venv-oracles: run scripts/setup.sh test")
            return
        }
        let script = Self.root.appendingPathComponent("scripts/differential/oracle.py").path
        let result = try await ChildProcess.run(
            python, [script, "--count", String(Self.payloadsPerFamily)], timeout: .seconds(300))
        try #require(result.status == 0, "oracle.py failed:\n\(result.stderr)")
        var reports: [String: FamilyReport] = [:]
        let decoder = JSONDecoder()
        for line in result.stdout.split(separator: "\n") {
            let entry = try decoder.decode(OracleCase.self, from: Data(line.utf8))
            var report = reports[entry.family, default: FamilyReport()]
            report.payloads += 1
            report.cases[entry.case, default: 0] += 1
            switch DifferentialComparison.outcome(entry) {
            case .match:
                report.matches += 1
                if entry.oracle == nil { report.bothRejected += 1 }
            case .known(let name): report.known[name, default: 0] += 1
            case .unexpected(let text): report.unexpected.append(text)
            }
            reports[entry.family] = report
        }
        var text = "differential decoder suite (seeded corpus, reference parsers pinned in scripts/setup.sh)\n"
        for family in Self.families {
            let report = reports[family, default: FamilyReport()]
            let known = report.known.values.reduce(0, +)
            text +=
                "  \(family): \(report.payloads) payloads, \(report.matches) matches (\(report.bothRejected) rejected by both), \(known) known disagreements, \(report.unexpected.count) unexpected\n"
            for (name, count) in report.known.sorted(by: { $0.key < $1.key }) {
                let reason = KnownDisagreement.all.first { $0.name == name }?.justification ?? ""
                text += "    known \(name) × \(count): \(reason)\n"
            }
            text +=
                "    cases: \(report.cases.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))\n"
            #expect(report.payloads == Self.payloadsPerFamily, "\(family): payloads")
            #expect(report.unexpected.isEmpty, "\(family): \(report.unexpected.prefix(10).joined(separator: "\n"))")
            // A match count near zero would mean the comparison compares nothing.
            #expect(report.matches * 10 > report.payloads * 8, "\(family): fewer than 80% matches")
        }
        text += "  no reference parser pinned: \(Self.withoutOracle.joined(separator: ", "))\n"
        print(text, terminator: "")
        // Every listed disagreement still occurs, so the list does not outlive the difference.
        for disagreement in KnownDisagreement.all {
            #expect(
                reports[disagreement.family]?.known[disagreement.name, default: 0] ?? 0 > 0,
                "known disagreement \(disagreement.name) no longer occurs; remove it from the list")
        }
    }

    @Test func everyAdvertisementDecoderIsCoveredOrListedWithoutOracle() {
        let covered = Set(Self.families + Self.withoutOracle + Self.advertisementFamilyDecoders)
        for name in DecoderRegistry.standard.advertisementDecoderNames {
            #expect(covered.contains(name), "\(name) is neither in the differential suite nor listed without oracle")
        }
    }
}
