import Bluetooth
import Testing

@testable import BlueZSimulator

@Suite struct CharacteristicStateTests {
    static func state(
        _ properties: Set<CharacteristicProperty>, value: [UInt8] = [0], requiresPairing: Bool = false,
        range: ClosedRange<UInt8>? = nil
    )
        -> CharacteristicState
    {
        let spec = ScenarioCharacteristic(
            uuid: BluetoothUUID(UInt16(0x2a06)), properties: properties, value: value, requiresPairing: requiresPairing,
            minLength: 1,
            maxLength: 4, allowedRange: range)
        let database = GattDatabase(services: [
            ScenarioService(uuid: BluetoothUUID(UInt16(0x1802)), characteristics: [spec])
        ])
        return CharacteristicState(definition: database.services[1].characteristics[0])
    }

    static let up = CharacteristicState.Link(connected: true, paired: false, mtu: 247)
    static let down = CharacteristicState.Link(connected: false, paired: false, mtu: 247)
    static let paired = CharacteristicState.Link(connected: true, paired: true, mtu: 247)

    @Test func readsCacheTheValueAndFollowTheFlags() throws {
        var readable = Self.state([.read], value: [1, 2, 3])
        #expect(!readable.hasCachedValue)
        #expect(try readable.read(offset: 1, link: Self.up) == [2, 3])
        #expect(readable.cachedValue == [1, 2, 3])
        #expect(throws: BlueZError.invalidArguments("Invalid offset")) { try readable.read(offset: 9, link: Self.up) }
        #expect(throws: BlueZError.failed("Not connected")) { try readable.read(offset: 0, link: Self.down) }
        var writeOnly = Self.state([.write])
        #expect(throws: BlueZError.notPermitted("Read not permitted")) { try writeOnly.read(offset: 0, link: Self.up) }
    }

    @Test func writesChooseTheProcedureLikeBlueZ() throws {
        var lamp = Self.state([.read, .write, .writeWithoutResponse, .notify], range: 0...1)
        #expect(try lamp.write([1], type: nil, offset: 0, link: Self.up).type == .request)
        #expect(try lamp.write([0], type: .command, offset: 0, link: Self.up).type == .command)
        #expect(lamp.value == [0])
        #expect(throws: BlueZError.failed("Operation failed with ATT error: 0x13")) {
            try lamp.write([7], type: .request, offset: 0, link: Self.up)
        }
        #expect(throws: BlueZError.invalidArguments("Invalid Length")) {
            try lamp.write([], type: .request, offset: 0, link: Self.up)
        }
        #expect(throws: BlueZError.invalidArguments("Invalid Length")) {
            try lamp.write([1, 1, 1, 1, 1], type: .request, offset: 0, link: Self.up)
        }
        // A refused write command is silent on air: success for the caller, value unchanged.
        let silent = try lamp.write([9], type: .command, offset: 0, link: Self.up)
        #expect(!silent.accepted)
        #expect(lamp.value == [0])

        var readOnly = Self.state([.read])
        #expect(throws: BlueZError.notSupported) { try readOnly.write([1], type: nil, offset: 0, link: Self.up) }
        #expect(throws: BlueZError.notPermitted("Write not permitted")) {
            try readOnly.write([1], type: .request, offset: 0, link: Self.up)
        }
        #expect(throws: BlueZError.notSupported) { try readOnly.write([1], type: .command, offset: 2, link: Self.up) }

        var alert = Self.state([.writeWithoutResponse])
        #expect(try alert.write([2], type: nil, offset: 0, link: Self.up).type == .command)
        #expect(throws: BlueZError.failed("Not connected")) {
            try alert.write([2], type: nil, offset: 0, link: Self.down)
        }
    }

    @Test func pairingRequiredUntilPaired() throws {
        var lock = Self.state([.read, .write, .notify], requiresPairing: true)
        #expect(throws: BlueZError.notPermitted("Not paired")) { try lock.read(offset: 0, link: Self.up) }
        #expect(throws: BlueZError.notPermitted("Not paired")) {
            try lock.write([1], type: .request, offset: 0, link: Self.up)
        }
        #expect(throws: BlueZError.notPermitted("Not paired")) { try lock.startNotify(sender: ":1.1", link: Self.up) }
        #expect(try lock.read(offset: 0, link: Self.paired) == [0])
        #expect(try lock.write([1], type: .request, offset: 0, link: Self.paired).accepted)
    }

    @Test func notificationsOnlyWhileNotifying() throws {
        var hr = Self.state([.notify])
        #expect(hr.update([1], connected: true) == .none)
        #expect(try hr.startNotify(sender: ":1.1", link: Self.up) == .subscribed(notifyingChanged: true))
        #expect(try hr.startNotify(sender: ":1.1", link: Self.up) == .alreadySubscribed)
        #expect(try hr.startNotify(sender: ":1.2", link: Self.up) == .subscribed(notifyingChanged: false))
        #expect(hr.update([2], connected: true) == .propertiesChanged([2]))
        #expect(hr.cachedValue == [2])
        #expect(hr.update([3], connected: false) == .none)
        #expect(try hr.stopNotify(sender: ":1.1").notifyingChanged == false)
        #expect(throws: BlueZError.failed("No notify session started")) { try hr.stopNotify(sender: ":1.1") }
        let vanished = hr.clientVanished(":1.2")
        #expect(vanished.notifyingChanged)
        #expect(!hr.notifying)
        var readOnly = Self.state([.read])
        #expect(throws: BlueZError.notSupported) { try readOnly.startNotify(sender: ":1.1", link: Self.up) }
    }

    @Test func sessionsSurviveDisconnectsLikeBluetoothd() throws {
        var hr = Self.state([.notify])
        _ = try hr.startNotify(sender: ":1.1", link: Self.up)
        _ = hr.linkDropped()
        #expect(hr.notifying, "Notifying keeps its value across a disconnect")
        #expect(hr.update([5], connected: false) == .none)
        let readyAgain = hr.linkReady()
        #expect(!readyAgain)
        #expect(hr.update([6], connected: true) == .propertiesChanged([6]))
        // StartNotify while disconnected is accepted and takes effect on the next connection.
        var battery = Self.state([.read, .notify])
        #expect(try battery.startNotify(sender: ":1.1", link: Self.down) == .deferred)
        #expect(!battery.notifying)
        let ready = battery.linkReady()
        #expect(ready)
        #expect(battery.notifying)
    }

    @Test func acquireNotifyAndWriteLocks() throws {
        var lamp = Self.state([.read, .write, .writeWithoutResponse, .notify])
        try lamp.checkAcquireNotify(link: Self.up)
        lamp.notifyAcquired(by: ":1.1")
        #expect(throws: BlueZError.notPermitted("Notify acquired")) { try lamp.checkAcquireNotify(link: Self.up) }
        #expect(throws: BlueZError.notPermitted("Notify acquired")) {
            try lamp.startNotify(sender: ":1.2", link: Self.up)
        }
        #expect(lamp.update([1], connected: true) == .socket([1]))
        let stopped = try lamp.stopNotify(sender: ":1.1")
        #expect(stopped.releasedSocket)
        try lamp.checkAcquireWrite(link: Self.up)
        lamp.writeAcquired(by: ":1.1")
        #expect(throws: BlueZError.notPermitted("Write acquired")) {
            try lamp.write([1], type: nil, offset: 0, link: Self.up)
        }
        let dropped = lamp.linkDropped()
        #expect(dropped == (notify: false, write: true))
        _ = try lamp.startNotify(sender: ":1.3", link: Self.up)
        #expect(throws: BlueZError.busy) { try lamp.checkAcquireNotify(link: Self.up) }
        let indicateOnly = Self.state([.indicate])
        #expect(throws: BlueZError.notSupported) { try indicateOnly.checkAcquireNotify(link: Self.up) }
        #expect(throws: BlueZError.notSupported) { try indicateOnly.checkAcquireWrite(link: Self.up) }
        #expect(throws: BlueZError.failed("Not connected")) { try indicateOnly.checkAcquireWrite(link: Self.down) }
    }
}
