import BlueZ
import Bluetooth
import DBus
import Foundation

/// The central library's conformance scenario: state, scan with a service filter, connect,
/// discovery, reads, writes with and without response, notify and indicate, MTU, typed errors,
/// disconnect, reconnect and re-subscribe. Runs against whatever owns `org.bluez` on the system
/// bus: real bluetoothd (VM tier) or the simulator.
struct ConformanceCentral {
    var adapter: String
    var strapName: String
    var lampName: String
    var thermometerName: String

    func run(_ transcript: Transcript) async throws {
        let connection = try await DBusConnection.system()
        let central = try await CentralManager(connection: connection, options: .init(adapter: adapter))
        typealias P = ConformanceProfile

        await transcript.expectSuccess("powered on") {
            try await central.waitUntilPoweredOn(timeout: .seconds(20))
            return "\(await central.state)"
        }

        // Scan with a service filter until the strap shows up; lamp and thermometer by name.
        var found: [String: Peripheral] = [:]
        await transcript.expectSuccess("scan with service filter finds the strap") {
            let stream = try await central.scan(services: [P.heartRateService])
            for await discovery in stream {
                let name = await discovery.peripheral.name
                if discovery.advertisementData.localName == strapName || name == strapName {
                    guard discovery.advertisementData.serviceUUIDs.contains(P.heartRateService) else {
                        throw Transcript.Failure(description: "advertisement lacks 180d")
                    }
                    found[strapName] = discovery.peripheral
                    break
                }
            }
            return "found"
        }
        guard let strap = found[strapName] else { return }
        for name in Set([lampName, thermometerName]) where found[name] == nil {
            await transcript.expectSuccess("scan finds \(name == lampName ? "the lamp" : "the thermometer")") {
                for await discovery in try await central.scan() {
                    let seen = await discovery.peripheral.name
                    if discovery.advertisementData.localName == name || seen == name {
                        found[name] = discovery.peripheral
                        break
                    }
                }
                return "found"
            }
        }

        await transcript.expectSuccess("connect resolves services") {
            try await central.connect(strap, timeout: .seconds(30))
            return "\(await strap.state)"
        }
        await transcript.expectSuccess("discover services and characteristics") {
            let services = try await strap.discoverServices()
            let uuids = Set(services.map(\.uuid))
            guard uuids.isSuperset(of: [P.heartRateService, P.batteryService]) else {
                throw Transcript.Failure(description: "services \(uuids)")
            }
            let measurement = try await strap.characteristic(P.heartRateMeasurement)
            guard measurement.properties.contains(.notify) else {
                throw Transcript.Failure(description: "2a37 properties \(measurement.properties)")
            }
            return "\(services.count) services"
        }
        await transcript.expectSuccess("read body sensor location") {
            let value = try await strap.readValue(for: try await strap.characteristic(P.bodySensorLocation))
            guard value.count == 1 else { throw Transcript.Failure(description: "\(value.count) bytes") }
            return "\(value[value.startIndex])"
        }
        await transcript.expectSuccess("read battery level") {
            let value = try await strap.readValue(for: try await strap.characteristic(P.batteryLevel))
            guard value.count == 1, value[value.startIndex] <= 100 else {
                throw Transcript.Failure(description: "\(Array(value))")
            }
            return "\(value[value.startIndex])%"
        }
        await transcript.expectSuccess("heart rate notifications") {
            try await receive(3, from: strap, P.heartRateMeasurement)
        }
        await transcript.expectError("write to a read-only characteristic", .operationNotSupported) {
            try await strap.writeValue(
                Data([1]), for: try await strap.characteristic(P.bodySensorLocation), type: .withResponse)
        }
        await transcript.expectError("notify on a characteristic that cannot notify", .operationNotSupported) {
            for try await _ in try await strap.notifications(for: try await strap.characteristic(P.bodySensorLocation))
            {
                break
            }
        }
        await transcript.expectSuccess("maximum write length from the MTU") {
            let length = await strap.maximumWriteValueLength(for: .withoutResponse)
            guard length >= 20 else { throw Transcript.Failure(description: "\(length)") }
            return "\(length)"
        }

        // The lamp: writes with and without response, read back.
        if let lamp = found[lampName] {
            if lamp !== strap {
                await transcript.expectSuccess("connect the lamp") {
                    try await central.connect(lamp, timeout: .seconds(30))
                    return "\(await lamp.state)"
                }
            }
            await transcript.expectSuccess("write with response, read back") {
                let power = try await lamp.characteristic(P.lampPower)
                try await lamp.writeValue(Data([1]), for: power, type: .withResponse)
                let value = try await lamp.readValue(for: power)
                guard value == Data([1]) else { throw Transcript.Failure(description: "\(Array(value))") }
                return "on"
            }
            await transcript.expectSuccess("write without response, read back") {
                let power = try await lamp.characteristic(P.lampPower)
                try await lamp.writeValue(Data([0]), for: power, type: .withoutResponse)
                let applied = try await eventually(timeout: .seconds(5)) {
                    try await lamp.readValue(for: power) == Data([0])
                }
                guard applied else { throw Transcript.Failure(description: "value not applied") }
                return "off"
            }
            await transcript.expectSuccess("lamp state notifications") {
                let power = try await lamp.characteristic(P.lampPower)
                let stream = try await lamp.notifications(for: power)
                try await lamp.writeValue(Data([1]), for: power, type: .withResponse)
                for try await value in stream {
                    guard value == Data([1]) else { continue }
                    return "notified on"
                }
                throw Transcript.Failure(description: "stream ended")
            }
        }
        if let thermometer = found[thermometerName] {
            if thermometer !== strap && thermometer !== found[lampName] {
                await transcript.expectSuccess("connect the thermometer") {
                    try await central.connect(thermometer, timeout: .seconds(30))
                    return "\(await thermometer.state)"
                }
            }
            await transcript.expectSuccess("temperature indications") {
                try await receive(1, from: thermometer, P.temperatureMeasurement)
            }
        }

        // Disconnect, reconnect, re-subscribe.
        await transcript.expectSuccess("disconnect is reported") {
            let events = central.disconnections
            await central.cancelConnection(strap)
            for await event in events where event.identifier == strap.identifier {
                return "\(event.reason)"
            }
            throw Transcript.Failure(description: "no disconnect event")
        }
        await transcript.expectError("read while disconnected", .notConnected) {
            _ = try await strap.readValue(for: try await strap.characteristic(P.batteryLevel))
        }
        await transcript.expectSuccess("reconnect and re-subscribe") {
            try await central.connect(strap, timeout: .seconds(30))
            return try await receive(2, from: strap, P.heartRateMeasurement)
        }
        for peripheral in Set(found.values.map(ObjectIdentifier.init)).compactMap({ id in
            found.values.first { ObjectIdentifier($0) == id }
        }) {
            await central.cancelConnection(peripheral)
        }
        await central.close()
    }

    /// Subscribes and waits for `count` values (10 s at most).
    func receive(_ count: Int, from peripheral: Peripheral, _ uuid: BluetoothUUID) async throws -> String {
        let characteristic = try await peripheral.characteristic(uuid)
        let stream = try await peripheral.notifications(for: characteristic)
        return try await withThrowingTaskGroup(of: String.self) { group in
            group.addTask {
                var received = 0
                for try await value in stream where !value.isEmpty {
                    received += 1
                    if received == count { return "\(received) values" }
                }
                throw Transcript.Failure(description: "stream ended after \(received)")
            }
            group.addTask {
                // A deadline, not synchronisation: the conformance step's time limit.
                try await Task.sleep(for: .seconds(10))
                throw Transcript.Failure(description: "fewer than \(count) values in 10 s")
            }
            let result = try await group.next()!
            group.cancelAll()
            return result
        }
    }
}
