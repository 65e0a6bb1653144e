import Foundation
import TestSupport
import Testing

/// `blebridge decode` on the consumer sensor families of issue 17 (the built binary).
@Suite struct DecodeCommandConsumerSensorsTests {
    private func blebridge(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        // 60 s: run next to the differential suite and the million random inputs on a loaded
        // 2-core machine, a start of the debug binary took over 20 s (alone: 0.1 s).
        try await ChildProcess.run(try BinaryLocator.blebridge(), ["decode"] + arguments, timeout: .seconds(60))
    }

    @Test func switchBotMeterAndOutdoorMeterWithItsManufacturerData() async throws {
        let meter = try await blebridge(["--service-data", "fd3d", "5400e407992d"])
        #expect(meter.status == 0, "\(meter.stderr)")
        #expect(
            meter.stdout
                == #"{"model":"Meter","battery":100,"temperature":25.7,"humidity":45,"fahrenheit_display":false}"#
                + "\n")
        let outdoor = try await blebridge([
            "--service-data", "fd3d", "--with-manufacturer-data", "0969=c0ffee170203220003033c00", "770058",
        ])
        #expect(outdoor.status == 0, "\(outdoor.stderr)")
        #expect(
            outdoor.stdout
                == #"{"model":"Outdoor Meter","battery":88,"temperature":-3.3,"humidity":60,"fahrenheit_display":false,"mac":"C0:FF:EE:17:02:03","sequence":34}"#
                + "\n")
        let bad = try await blebridge(["--service-data", "fd3d", "--with-manufacturer-data", "0969", "770058"])
        #expect(bad.status != 0)
    }

    @Test func sensorPushNeedsItsServiceUUID() async throws {
        let result = try await blebridge([
            "--manufacturer-data", "0c04", "--with-service-uuid", "ef090000-11d6-42ba-93b8-9dd7ec090ab0", "cd3447",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == #"{"model":"HT.w","temperature":21.5,"humidity":45.25}"# + "\n")
        let without = try await blebridge(["--manufacturer-data", "0c04", "cd3447"])
        #expect(without.status != 0)
    }

    @Test func oralBToothbrush() async throws {
        let result = try await blebridge(["--manufacturer-data", "00dc", "--units", "0320010380011e01020f04"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("# oralb\nmodel = \"Genius Series D701\"\n"))
        #expect(result.stdout.contains("time = 90 s\n"))
    }

    @Test func qingpingThermometer() async throws {
        let result = try await blebridge(["--service-data", "fdcd", "0807110217eeffc00104e600f401020155"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == #"{"model":"CGG1","device_type":7,"mac":"C0:FF:EE:17:02:11","event":false,"temperature":23,"humidity":50,"battery":85}"#
                + "\n")
    }

    /// MiBeacon's button object 0x1001, read per model: the K9B-2BTN's press type 2 is a double
    /// press (another model's long press), and an unknown model's codes are published raw.
    @Test func mibeaconButtonObject() async throws {
        let k9b = try await blebridge([
            "--service-data", "fe95", "--address", "C0:FF:EE:17:05:04", "5050691507040517eeffc0011003000002",
        ])
        #expect(k9b.status == 0, "\(k9b.stderr)")
        #expect(
            k9b.stdout
                == #"{"product_id":5481,"model":"K9B-2BTN","packet_id":7,"encrypted":false,"button_left":"double_press"}"#
                + "\n")
        let unknown = try await blebridge(["--service-data", "fe95", "4050341207011003010002"])
        #expect(unknown.status == 0, "\(unknown.stderr)")
        #expect(
            unknown.stdout
                == #"{"product_id":4660,"packet_id":7,"encrypted":false,"button_index":1,"button_value":0,"button_press_code":2}"#
                + "\n")
    }
}
