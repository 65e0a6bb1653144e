import BlueZ
import Configuration
import Foundation
import Testing

@testable import Gateway

/// What bluetoothd's version means for `scan.mode` `"passive"`: 5.69 and 5.70 report nothing (refused
/// at start), 5.71 and later miss the formats without markers (warned about), 5.68 and earlier miss
/// nothing, an unknown version is warned about as 5.71 would be.
@Suite struct PassiveScanVersionPolicyTests {
    static func version(_ minor: Int) -> BluetoothdVersion { BluetoothdVersion(major: 5, minor: minor) }

    @Test(arguments: [69, 70])
    func bluetoothd569And570AreRefused(_ minor: Int) throws {
        guard case .refuse(let problem) = PassiveScanVersionPolicy.verdict(version: Self.version(minor)) else {
            Issue.record("5.\(minor) not refused")
            return
        }
        #expect(problem.code == .bluetoothdUnsupported)
        #expect(problem.code.rawValue == "bluetoothd_unsupported")
        #expect(problem.description.contains("bluetoothd 5.\(minor)"), "\(problem)")
        #expect(problem.description.contains("upgrade bluez to 5.71"), "\(problem)")
        #expect(problem.description.contains("set bluetooth.scan.mode to \"active\""), "\(problem)")
    }

    @Test(arguments: [(5, 71), (5, 82), (5, 87), (6, 0)])
    func bluetoothd571AndLaterWarnNamingTheVersion(_ major: Int, _ minor: Int) {
        let verdict = PassiveScanVersionPolicy.verdict(version: BluetoothdVersion(major: major, minor: minor))
        #expect(
            verdict
                == .proceed(
                    warning: "not seen in passive scanning by bluetoothd 5.71 and later (this one is \(major).\(minor))"
                ))
    }

    @Test(arguments: [66, 67, 68, 50])
    func bluetoothdBefore569HasNoAfterUUIDWarning(_ minor: Int) {
        #expect(PassiveScanVersionPolicy.verdict(version: Self.version(minor)) == .proceed(warning: nil))
    }

    @Test func anUnknownVersionWarnsSayingSo() {
        guard case .proceed(let warning?) = PassiveScanVersionPolicy.verdict(version: nil) else {
            Issue.record("no warning for an unknown version")
            return
        }
        #expect(warning.hasPrefix("not seen in passive scanning by bluetoothd 5.71 and later"))
        #expect(warning.contains("version could not be determined"), "\(warning)")
    }

    @Test func checkConfigNotesNameWhatPassiveScanningMissesOn571() throws {
        let passive = try ConfigurationLoader().decode(
            Data(
                #"""
                {"bluetooth": {"scan": {"mode": "passive"}}, "auto_devices": {"enabled": true},
                 "devices": [{"id": "named", "match": {"name_prefix": "Thermo"}}]}
                """#.utf8))
        let notes = PassiveScanVersionPolicy.checkConfigNotes(passive)
        #expect(
            notes.contains(
                "not seen in passive scanning by bluetoothd 5.71 and later: device named (name \"Thermo…\")"),
            "\(notes)")
        #expect(notes.contains { $0.contains("auto_devices decoder mibeacon") }, "\(notes)")
        #expect(!notes.contains { $0.contains("decoder bthome ") }, "BTHome has markers: \(notes)")
        #expect(notes.last?.contains("5.69 and 5.70") == true, "\(notes)")
        let active = try ConfigurationLoader().decode(Data(#"{"auto_devices": {"enabled": true}}"#.utf8))
        #expect(PassiveScanVersionPolicy.checkConfigNotes(active).isEmpty)
    }
}
