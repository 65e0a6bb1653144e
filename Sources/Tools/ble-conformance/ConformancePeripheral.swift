import BlueZ
import Bluetooth
import DBus
import Foundation

/// The peripheral half of the conformance scenario, served by BLEBridge's own `PeripheralManager`:
/// one device with the strap's Heart Rate and Battery services, the lamp's service and a Health
/// Thermometer, advertising the strap's name and Heart Rate service.
struct ConformancePeripheral {
    var adapter: String
    var advertisement: LocalAdvertisement
    var refreshAdvertising: Duration?

    func run() async throws -> Never {
        typealias P = ConformanceProfile
        let connection = try await DBusConnection.system()
        let manager = PeripheralManager(connection: connection, adapter: adapter)
        let singleByte: LocalCharacteristic.WriteHandler = { request throws(ATTError) in
            guard request.value.count == 1 else { throw ATTError(.invalidValueLength, "Invalid Length") }
        }
        let brightness: LocalCharacteristic.WriteHandler = { request throws(ATTError) in
            guard request.value.count == 1 else { throw ATTError(.invalidValueLength, "Invalid Length") }
            guard request.value[0] <= 100 else { throw ATTError(.notPermitted, "Brightness is 0 to 100") }
        }
        try await manager.publish([
            LocalService(
                uuid: P.heartRateService,
                characteristics: [
                    LocalCharacteristic(uuid: P.heartRateMeasurement, properties: [.notify]),
                    LocalCharacteristic(uuid: P.bodySensorLocation, properties: [.read]),
                ]),
            LocalService(
                uuid: P.batteryService,
                characteristics: [LocalCharacteristic(uuid: P.batteryLevel, properties: [.read, .notify])]),
            LocalService(
                uuid: P.lampService,
                characteristics: [
                    LocalCharacteristic(
                        uuid: P.lampPower, properties: [.read, .write, .writeWithoutResponse, .notify],
                        descriptors: [LocalDescriptor(uuid: BluetoothUUID(UInt16(0x2901)), value: Array("Power".utf8))],
                        onWrite: singleByte),
                    LocalCharacteristic(
                        uuid: P.lampBrightness, properties: [.read, .write, .notify], onWrite: brightness),
                ]),
            LocalService(
                uuid: P.thermometerService,
                characteristics: [LocalCharacteristic(uuid: P.temperatureMeasurement, properties: [.indicate])]),
        ])
        try await manager.updateValue([0x01], for: P.bodySensorLocation)  // chest
        try await manager.updateValue([87], for: P.batteryLevel)
        try await manager.updateValue([0], for: P.lampPower)
        try await manager.updateValue([100], for: P.lampBrightness)
        var advertisement = advertisement
        advertisement.serviceUUIDs = [P.heartRateService]
        try await manager.startAdvertising(advertisement, refreshEvery: refreshAdvertising)
        say("peripheral: serving on \(adapter) as \(advertisement.localName ?? "")")

        // Lamp writes become notifications of its new state.
        Task {
            for await event in manager.events {
                guard case .wrote(let uuid, let value, let kind) = event else { continue }
                // One line per write, for scenarios that check what reached the device.
                say("peripheral: wrote \(uuid) \(value.map { String($0, radix: 16) }.joined(separator: " ")) \(kind)")
                if uuid == P.lampPower || uuid == P.lampBrightness {
                    _ = try? await manager.updateValue(value, for: uuid)
                }
            }
        }
        // Heart rate every 200 ms (uint8 format, sensor contact detected), a temperature every 500 ms.
        var tick = 0
        while true {
            // Real delay: the test peripheral notifies every 100 ms.
            try await Task.sleep(for: .milliseconds(100))
            tick += 1
            if tick % 2 == 0 {
                try await manager.updateValue([0x06, UInt8(60 + tick % 40)], for: P.heartRateMeasurement)
            }
            if tick % 5 == 0 {
                // Flags 0 (Celsius), IEEE-11073 FLOAT 36.6 = mantissa 366, exponent -1.
                try await manager.updateValue([0x00, 0x6E, 0x01, 0x00, 0xFF], for: P.temperatureMeasurement)
            }
        }
    }
}

/// Writes one line to standard output at once (unbuffered: scenarios read the log while it runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
