import BlueZ
import BlueZSimulator
import Bluetooth
import Foundation
import Synchronization
import TestSupport
import Testing

/// `Peripheral.notifications(for:onValue:onEnd:)` and `NotificationListener` against the BlueZ
/// simulator: the lamp's brightness characteristic notifies exactly the values the test sets.
@Suite(.serialized, .timeLimit(.minutes(1))) struct NotificationListenerSimulatorTests {
    static let brightness = BluetoothUUID("6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let lampAddress = "C0:FF:EE:00:00:05"

    /// What a handler listener received.
    final class Received: Sendable {
        private let values = Mutex<[UInt8]>([])
        private let ends = Mutex<[BluetoothError.Code?]>([])

        var onValue: @Sendable (Data) -> Void {
            { data in self.values.withLock { $0.append(contentsOf: data) } }
        }
        var onEnd: @Sendable ((any Error)?) -> Void {
            { error in self.ends.withLock { $0.append((error as? BluetoothError)?.code) } }
        }

        var all: [UInt8] { values.withLock { $0 } }
        var endings: [BluetoothError.Code?] { ends.withLock { $0 } }

        func waitFor(_ value: UInt8) async -> Bool {
            await waitUntil { self.all.contains(value) }
        }
    }

    private func notify(_ bluez: SimulatedBlueZ, _ value: UInt8) async throws {
        try await bluez.simulator.setCharacteristicValue(
            address: Self.lampAddress, uuid: Self.brightness.uuidString, value: [value], notify: true)
    }

    private func simulatorNotifying(_ bluez: SimulatedBlueZ) async throws -> Bool {
        try await bluez.simulator.snapshot(address: Self.lampAddress).notifying.contains(Self.brightness.uuidString)
    }

    /// The connected lamp, its brightness characteristic and a handler listener on it.
    private func listening(_ bluez: SimulatedBlueZ) async throws -> (
        Peripheral, GATTCharacteristic, Received, NotificationListener
    ) {
        let lamp = try await bluez.connected(SimulatedBlueZ.lamp)
        let brightness = try await lamp.characteristic(Self.brightness)
        let received = Received()
        let listener = try await lamp.notifications(for: brightness, onValue: received.onValue, onEnd: received.onEnd)
        return (lamp, brightness, received, listener)
    }

    @Test func handlerGetsEveryValueInOrder() async throws {
        try await SimulatedBlueZ.run { bluez in
            let (lamp, brightness, received, listener) = try await listening(bluez)
            #expect(await lamp.isNotifying(brightness))
            #expect(try await simulatorNotifying(bluez))
            for value in 0..<100 { try await notify(bluez, UInt8(value)) }
            #expect(await received.waitFor(99))
            #expect(received.all == (0..<100).map { UInt8($0) })
            listener.cancel()
        }
    }

    /// An indication (no `AcquireNotify`: `StartNotify`, then `PropertiesChanged`) reaches the
    /// handler on the D-Bus connection's thread while the signal is dispatched: the manager and its
    /// peripherals are pinned to that thread, so the value takes no stream, task or actor hop (it
    /// reached the handler on a pool thread, after two hops, before they were pinned).
    @Test func indicationsReachTheHandlerOnTheDBusThread() async throws {
        try await SimulatedBlueZ.run { bluez in
            let address = BluetoothAddress("C0:FF:EE:00:00:02")!  // the demo's thermometer
            let thermometer = try await bluez.connected(address)
            let measurement = try await thermometer.characteristic(BluetoothUUID(UInt16(0x2A1C)))
            #expect(measurement.properties.contains(.indicate) && !measurement.properties.contains(.notify))
            let threads = Mutex<[String]>([])
            let listener = try await thermometer.notifications(for: measurement) { _ in
                let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                threads.withLock { $0.append(name.trimmingCharacters(in: .whitespacesAndNewlines)) }
            }
            for value in 0..<5 {
                try await bluez.simulator.setCharacteristicValue(
                    address: address.description, uuid: measurement.uuid.uuidString, value: [UInt8(value), 0, 0, 0, 0],
                    notify: true)
            }
            #expect(await waitUntil { threads.withLock { $0.count } >= 5 })
            listener.cancel()
            #expect(Set(threads.withLock { $0 }) == ["blebridge.dbus"])
        }
    }

    /// Load mode sends about ten values per millisecond tick back to back: a handler that hopped
    /// through tasks or threads would see them reordered.
    @Test func handlerGetsABurstInOrder() async throws {
        try await SimulatedBlueZ.run { bluez in
            try await bluez.simulator.setLoad(devices: 1, rate: 1)  // creates LOAD-0000
            let device = try await bluez.connected(LoadDevices.address(0))
            let sequences = Mutex<[UInt64]>([])
            let listener = try await device.notifications(
                for: try await device.characteristic(LoadDevices.characteristic),
                onValue: { data in
                    if let value = LoadValue(bytes: Array(data)) { sequences.withLock { $0.append(value.sequence) } }
                })
            try await bluez.simulator.setLoad(devices: 1, rate: 10_000)
            let enough = await waitUntil { sequences.withLock { $0.count } >= 2_000 }
            try await bluez.simulator.setLoad(devices: 0, rate: 0)
            listener.cancel()
            #expect(enough)
            let received = sequences.withLock { $0 }
            // Strictly increasing: in order. Not necessarily consecutive: like BlueZ, the simulator drops
            // a value when the socket is full (a starved notify thread in a loaded test run).
            #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 }, "out of order")
        }
    }

    /// A peer that notifies as soon as notifications are enabled (load mode sends from the tick after
    /// `AcquireNotify`; a sensor that streams does the same) loses nothing: values the socket delivers
    /// while the subscribing call is still returning reach the first listener, in order. (On an idle
    /// machine the window is shorter than a value's interval, so this passed before the fix too;
    /// `NotificationChannelTests` pins the channel's part deterministically.)
    @Test func valuesSentBeforeTheFirstListenerIsAddedReachIt() async throws {
        try await SimulatedBlueZ.run { bluez in
            try await bluez.simulator.setLoad(devices: 1, rate: 5_000)  // sends only while notifying
            let device = try await bluez.connected(LoadDevices.address(0))
            let characteristic = try await device.characteristic(LoadDevices.characteristic)
            let sequences = Mutex<[UInt64]>([])
            let listener = try await device.notifications(for: characteristic) { data in
                if let value = LoadValue(bytes: Array(data)) { sequences.withLock { $0.append(value.sequence) } }
            }
            let enough = await waitUntil { sequences.withLock { $0.count } >= 500 }
            try await bluez.simulator.setLoad(devices: 0, rate: 0)
            listener.cancel()
            #expect(enough)
            let received = sequences.withLock { $0 }
            #expect(received.first == 1, "the first \((received.first ?? 1) - 1) values were dropped")
            #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 }, "out of order")
        }
    }

    /// `cancel()` takes effect when it returns: a handler that cancels itself in the middle of a
    /// burst gets nothing more, while a stream on the same characteristic keeps receiving.
    @Test func aHandlerCancelledInTheMiddleOfABurstGetsNothingMore() async throws {
        try await SimulatedBlueZ.run { bluez in
            try await bluez.simulator.setLoad(devices: 1, rate: 1)  // creates LOAD-0000
            let device = try await bluez.connected(LoadDevices.address(0))
            let characteristic = try await device.characteristic(LoadDevices.characteristic)
            let stream = try await device.notifications(for: characteristic)
            let state = Mutex(
                (listener: NotificationListener?.none, received: [UInt64](), cancelledAfter: UInt64?.none))
            let listener = try await device.notifications(for: characteristic) { data in
                guard let value = LoadValue(bytes: Array(data)) else { return }
                let toCancel = state.withLock { state -> NotificationListener? in
                    state.received.append(value.sequence)
                    guard state.received.count >= 50, state.cancelledAfter == nil, let listener = state.listener else {
                        return nil
                    }
                    state.cancelledAfter = value.sequence
                    return listener
                }
                toCancel?.cancel()
            }
            state.withLock { $0.listener = listener }
            try await bluez.simulator.setLoad(devices: 1, rate: 10_000)
            let cancelled = await waitUntil { state.withLock { $0.cancelledAfter } != nil }
            let cancelledAfter = try #require(state.withLock { $0.cancelledAfter }, "the handler never cancelled")
            #expect(cancelled)
            // The stream sees the burst go on well past the cancel.
            let later = await withDeadline(.seconds(10)) { () -> UInt64? in
                do {
                    for try await data in stream {
                        if let value = LoadValue(bytes: Array(data)), value.sequence >= cancelledAfter + 200 {
                            return value.sequence
                        }
                    }
                } catch {}
                return nil
            }
            try await bluez.simulator.setLoad(devices: 0, rate: 0)
            #expect(later != nil)
            #expect(state.withLock { $0.received.last } == cancelledAfter)
        }
    }

    @Test func cancellingTheLastListenerTurnsNotificationsOffWithoutEndingIt() async throws {
        try await SimulatedBlueZ.run { bluez in
            let (lamp, brightness, received, listener) = try await listening(bluez)
            try await notify(bluez, 1)
            #expect(await received.waitFor(1))

            listener.cancel()
            listener.cancel()  // harmless
            #expect(try await waitUntil { try await !self.simulatorNotifying(bluez) })
            #expect(await !lamp.isNotifying(brightness))
            try await notify(bluez, 2)  // the peer has notifications off: nothing is sent

            // Subscribing again turns them on again; the cancelled handler hears nothing of it.
            let stream = try await lamp.notifications(for: brightness)
            #expect(try await simulatorNotifying(bluez))
            try await notify(bluez, 3)
            #expect(try await next(1, of: stream) == [Data([3])])
            #expect(received.all == [1])
            #expect(received.endings.isEmpty)  // cancel() does not call onEnd
        }
    }

    @Test func aStreamAndAHandlerShareTheCharacteristicAndOutliveEachOther() async throws {
        try await SimulatedBlueZ.run { bluez in
            let (lamp, brightness, received, handler) = try await listening(bluez)
            let first = try await lamp.notifications(for: brightness)
            try await notify(bluez, 1)
            #expect(try await next(1, of: first) == [Data([1])])
            #expect(await received.waitFor(1))

            // The stream's consumer goes away: the handler keeps receiving, notifications stay on.
            let consumer = Task { for try await _ in first {} }
            consumer.cancel()
            _ = await consumer.result
            try await notify(bluez, 2)
            #expect(await received.waitFor(2))
            #expect(try await simulatorNotifying(bluez))

            // A new stream, then the handler leaves: the stream keeps receiving.
            let second = try await lamp.notifications(for: brightness)
            handler.cancel()
            try await notify(bluez, 3)
            try await notify(bluez, 4)
            #expect(try await next(2, of: second) == [Data([3]), Data([4])])
            #expect(try await simulatorNotifying(bluez))
            #expect(await lamp.isNotifying(brightness))
            #expect(!received.all.contains(4))
            #expect(received.endings.isEmpty)
        }
    }

    @Test func onEndRunsOnceWhenTheLinkDrops() async throws {
        try await SimulatedBlueZ.run { bluez in
            let (lamp, brightness, received, listener) = try await listening(bluez)
            let stream = try await lamp.notifications(for: brightness)
            try await notify(bluez, 1)
            #expect(await received.waitFor(1))

            try await bluez.simulator.disconnect(address: Self.lampAddress)
            #expect(await waitUntil { !received.endings.isEmpty })
            #expect(received.endings == [.peripheralDisconnected])
            await #expect(throws: BluetoothError.self) { for try await _ in stream {} }

            // After a reconnect a new handler works; the ended one is neither called again nor ended twice.
            listener.cancel()
            try await bluez.manager.connect(lamp, timeout: .seconds(30))
            let again = Received()
            let renewed = try await lamp.notifications(
                for: try await lamp.characteristic(Self.brightness), onValue: again.onValue, onEnd: again.onEnd)
            try await notify(bluez, 5)
            #expect(await again.waitFor(5))
            #expect(received.all == [1])
            #expect(received.endings == [.peripheralDisconnected])
            renewed.cancel()
        }
    }
}
