import Foundation
import TestSupport
import Testing

/// `blebridge decode`, run on the built binary.
@Suite struct DecodeCommandTests {
    private func blebridge(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ChildProcess.run(try BinaryLocator.blebridge(), ["decode"] + arguments, timeout: .seconds(20))
    }

    @Test func decodesAHeartRateMeasurementByUUID() async throws {
        let result = try await blebridge(["--uuid", "2a37", "0x164840035003"])
        #expect(result.status == 0)
        #expect(result.stdout == #"{"heart_rate":72,"sensor_contact":true,"rr_intervals":[0.8125,0.828125]}"# + "\n")
    }

    @Test func decodesByNameWithUnits() async throws {
        let result = try await blebridge(["--uuid", "battery_level", "--units", "58"])
        #expect(result.status == 0)
        #expect(result.stdout == "# battery_level\nbattery = 88 %\n")
    }

    @Test func decodesEncryptedBTHomeServiceData() async throws {
        let result = try await blebridge([
            "--service-data", "fcd2", "--bind-key", "231d39c1d7cc1ab1aee224cd096db932", "--address",
            "54:48:E6:8F:80:A5", "41a47266c95f730011223378237214",
        ])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix(#"{"temperature":25.06,"humidity":50.55,"encrypted":true"#))
    }

    /// The issue-17 bar: an encrypted LYWSD03MMC (stock firmware) MiBeacon v5 frame, sealed with
    /// this key by scripts/differential/oracle.py and decoded as 21.5 °C / 51 % by xiaomi-ble 1.21.2.
    /// The sensor sends temperature and humidity in separate frames (objects 0x1004 and 0x1006).
    @Test func decodesAnEncryptedLYWSD03MMCFrame() async throws {
        let key = "814aac74c4f17b6c1581e1ab87816b99"
        let temperature = try await blebridge([
            "--service-data", "fe95", "--bind-key", key, "--address", "A4:C1:38:56:53:84",
            "58585b05a084535638c1a475dbc33f642301004a1668a5",
        ])
        #expect(temperature.status == 0, "\(temperature.stderr)")
        #expect(temperature.stdout.contains(#""model":"LYWSD03MMC""#))
        #expect(temperature.stdout.contains(#""temperature":21.5"#))
        let humidity = try await blebridge([
            "--service-data", "fe95", "--bind-key", key, "--address", "A4:C1:38:56:53:84", "--units",
            "58585b05a184535638c1a416859c1d9a23010073329fa4",
        ])
        #expect(humidity.status == 0)
        #expect(humidity.stdout.contains("humidity = 51.7 %\n"))
        let wrongKey = try await blebridge([
            "--service-data", "fe95", "--bind-key", "00112233445566778899aabbccddeeff", "--address",
            "A4:C1:38:56:53:84", "58585b05a084535638c1a475dbc33f642301004a1668a5",
        ])
        #expect(wrongKey.status == 65)
        #expect(wrongKey.stderr.contains("decryption_failed at 'bind_key': the bind key does not match"))
    }

    @Test func decodesManufacturerData() async throws {
        let result = try await blebridge([
            "--manufacturer-data", "004c", "0215426c7565436861726d426561636f6e730efe1355c5",
        ])
        #expect(result.status == 0)
        #expect(result.stdout.contains(#""major":3838,"minor":4949"#))
    }

    /// ThermoPro and INKBIRD are recognised by `--name`; their readings start in the company id.
    @Test func decodesManufacturerDataWithAName() async throws {
        let thermoPro = try await blebridge(["--manufacturer-data", "e5c2", "--name", "TP357 (2B54)", "002f2c02"])
        #expect(thermoPro.status == 0, "\(thermoPro.stderr)")
        #expect(thermoPro.stdout.hasPrefix(#"{"temperature":22.9,"humidity":47,"battery":1,"#))
        let inkbird = try await blebridge(["--manufacturer-data", "0929", "--name", "sps", "2e160000005508"])
        #expect(inkbird.stdout.hasPrefix(#"{"temperature":23.45,"humidity":56.78,"battery":85,"#))
        let unnamed = try await blebridge(["--manufacturer-data", "0929", "2e160000005508"])
        #expect(unnamed.status == 65)
        let govee = try await blebridge(["--manufacturer-data", "ec88", "0003a2d45c00"])
        #expect(govee.stdout.hasPrefix(#"{"temperature":23.8,"humidity":29.2,"battery":92,"#))
    }

    @Test func aTruncatedValueExits65WithTheFieldAndTheRawBytes() async throws {
        let result = try await blebridge(["--uuid", "2a37", "0148"])
        #expect(result.status == 65)
        #expect(result.stdout.contains(#""raw_hex":"0148""#))
        #expect(result.stderr.contains("truncated at 'heart_rate'"))
    }

    @Test func decodesWithALayoutFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("layout.json").path
        try Data(#"{"name":"lamp","fields":[{"name":"brightness","type":"uint8","unit":"%"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        let result = try await blebridge(["--layout", path, "32"])
        #expect(result.status == 0)
        #expect(result.stdout == #"{"brightness":50}"# + "\n")
    }

    @Test(arguments: [["zz"], [], ["--uuid", "2a37", "--service-data", "fcd2", "00"], ["--bind-key", "00", "00"]])
    func usageErrorsExit64(_ arguments: [String]) async throws {
        let result = try await blebridge(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("blebridge decode: "))
        #expect(result.stderr.hasSuffix(" (see 'blebridge decode --help')\n"))
    }
}
