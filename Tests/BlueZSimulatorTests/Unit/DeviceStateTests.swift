import Bluetooth
import Testing

@testable import BlueZSimulator

@Suite struct DeviceStateTests {
    static let clock = ContinuousClock()
    static let timing = ScenarioTiming()

    static func strap() throws -> DeviceState {
        DeviceState(spec: try #require(try Scenario.load("demo").devices.first), adapterPath: "/org/bluez/hci0")
    }

    @Test func appearsOnFirstAdvertisementThenReportsChanges() throws {
        var device = try Self.strap()
        #expect(device.path == "/org/bluez/hci0/dev_C0_FF_EE_00_00_01")
        let now = Self.clock.now
        #expect(
            device.advertisementSeen(
                at: now, rssi: -60, manufacturerData: [:], serviceData: [:], rssiDeltaThreshold: true,
                duplicateData: false) == [.added])
        // Without a filter bluetoothd reports RSSI only when it moved by 8 dBm or more.
        #expect(
            device.advertisementSeen(
                at: now, rssi: -63, manufacturerData: [:], serviceData: [:], rssiDeltaThreshold: true,
                duplicateData: false) == [])
        #expect(
            device.advertisementSeen(
                at: now, rssi: -70, manufacturerData: [:], serviceData: [:], rssiDeltaThreshold: true,
                duplicateData: false) == [.changed(["RSSI"])])
        #expect(
            device.advertisementSeen(
                at: now, rssi: -71, manufacturerData: [:], serviceData: [:], rssiDeltaThreshold: false,
                duplicateData: false) == [.changed(["RSSI"])])
        let data = [BluetoothUUID(UInt16(0xfcd2)): [UInt8(1)]]
        #expect(
            device.advertisementSeen(
                at: now, rssi: -71, manufacturerData: [:], serviceData: data, rssiDeltaThreshold: false,
                duplicateData: false) == [.changed(["ServiceData"])])
        #expect(
            device.advertisementSeen(
                at: now, rssi: -71, manufacturerData: [:], serviceData: data, rssiDeltaThreshold: false,
                duplicateData: false) == [])
        #expect(
            device.advertisementSeen(
                at: now, rssi: -71, manufacturerData: [:], serviceData: data, rssiDeltaThreshold: false,
                duplicateData: true) == [.changed(["ServiceData"])])
        #expect(device.discoveryStopped() == [.invalidated(["TxPower", "RSSI"])])
        #expect(device.expireIfStale(now: now + .seconds(29), timeout: .seconds(30)) == [])
        #expect(device.expireIfStale(now: now + .seconds(30), timeout: .seconds(30)) == [.removed])
    }

    @Test func connectResolvesServicesThenDisconnectKeepsTheTree() throws {
        var device = try Self.strap()
        _ = device.advertisementSeen(
            at: Self.clock.now, rssi: -60, manufacturerData: [:], serviceData: [:], rssiDeltaThreshold: true,
            duplicateData: false)
        #expect(
            device.connect(adapterPowered: true, timing: Self.timing)
                == .pending(delay: Self.timing.connectDelay, failure: nil))
        #expect(
            device.connect(adapterPowered: true, timing: Self.timing)
                == .reply(.failed("Operation already in progress")))
        #expect(device.connectionEstablished(at: Self.clock.now) == [.changed(["Connected"])])
        #expect(device.resolveServices() == [.gattAdded, .changed(["UUIDs"]), .changed(["ServicesResolved"])])
        #expect(device.connect(adapterPowered: true, timing: Self.timing) == .reply(nil))
        #expect(!device.temporary, "Connect makes the device persistent")
        let hr = try #require(device.gatt.characteristic(uuid: BluetoothUUID(UInt16(0x2a37))))
        let link = device.linkState(mtu: 247)
        _ = try device.withCharacteristic(hr) { state throws(BlueZError) in
            try state.startNotify(sender: ":1.5", link: link)
        }
        #expect(device.requestDisconnect() == (false, true))
        #expect(device.linkLost() == [.changed(["ServicesResolved"]), .changed(["Connected"])])
        #expect(device.gattExported, "the GATT cache stays exported")
        #expect(
            device.expireIfStale(now: Self.clock.now + .seconds(600), timeout: .seconds(30)) == [],
            "connected once: not temporary")
        // Reconnect: sessions re-register, no second export.
        _ = device.connect(adapterPowered: true, timing: Self.timing)
        _ = device.connectionEstablished(at: Self.clock.now)
        #expect(device.resolveServices() == [.changed(["ServicesResolved"])])
        #expect(device.requestDisconnect() == (false, true))
        #expect(device.requestDisconnect() == (false, true))
        _ = device.linkLost()
        #expect(device.requestDisconnect() == (false, false), "Disconnect when not connected succeeds at once")
    }

    /// bluetoothd 5.66 at power-off: a device linked then keeps its object and GATT tree (unbonded:
    /// temporary from now on); an unpaired device without a link goes; a paired one stays.
    @Test func powerOffKeepsLinkedAndPairedDevices() throws {
        var linked = try Self.strap()
        let start = Self.clock.now
        _ = linked.advertisementSeen(
            at: start, rssi: -60, manufacturerData: [:], serviceData: [:], rssiDeltaThreshold: true,
            duplicateData: false)
        _ = linked.connect(adapterPowered: true, timing: Self.timing)
        _ = linked.connectionEstablished(at: start)
        _ = linked.resolveServices()
        _ = linked.linkLost()
        var idle = linked
        let off = start + .seconds(100)
        #expect(linked.adapterPoweredOff(wasLinked: true, now: off) == [])
        #expect(linked.exported && linked.gattExported && linked.temporary)
        #expect(linked.expireIfStale(now: off + .seconds(29), timeout: .seconds(30)) == [])
        #expect(linked.expireIfStale(now: off + .seconds(30), timeout: .seconds(30)) == [.removed])
        #expect(idle.adapterPoweredOff(wasLinked: false, now: off) == [.removed], "disconnected before: goes")
        var paired = try Self.strap()
        _ = paired.advertisementSeen(
            at: start, rssi: -60, manufacturerData: [:], serviceData: [:], rssiDeltaThreshold: true,
            duplicateData: false)
        _ = paired.setTrusted(true)
        #expect(paired.adapterPoweredOff(wasLinked: false, now: off) == [])
        #expect(paired.expireIfStale(now: off + .seconds(600), timeout: .seconds(30)) == [])
    }

    /// A removed adapter takes every device; those bluetoothd had stored (connected before, or
    /// paired) come back with it, disconnected and without GATT objects; the others do not.
    @Test func adapterRemovalKeepsOnlyStoredDevices() throws {
        let start = Self.clock.now
        var connected = try Self.strap()
        _ = connected.advertisementSeen(
            at: start, rssi: -60, manufacturerData: [:], serviceData: [:], rssiDeltaThreshold: true,
            duplicateData: false)
        var seen = connected
        _ = connected.connect(adapterPowered: true, timing: Self.timing)
        _ = connected.connectionEstablished(at: start)
        _ = connected.resolveServices()
        #expect(!connected.temporary)
        _ = connected.linkLost()
        _ = connected.adapterPoweredOff(wasLinked: true, now: start)
        connected.adapterRemoved(stored: true)
        #expect(connected.exported && !connected.temporary && !connected.gattExported && !connected.connected)
        seen.adapterRemoved(stored: false)
        #expect(!seen.exported)
    }

    @Test func connectFaults() throws {
        var device = try Self.strap()
        #expect(device.connect(adapterPowered: false, timing: Self.timing) == .reply(.failed("Input/output error")))
        device.injectConnectFailures(.abortByLocal, count: 1)
        device.injectConnectFailures(.inProgress, count: 1)
        device.injectConnectFailures(.timeout, count: 1)
        #expect(
            device.connect(adapterPowered: true, timing: Self.timing)
                == .linkUpThenAbort(delay: Self.timing.connectDelay),
            "the link comes up and is aborted: Connected true then false")
        #expect(device.connectionEstablished(at: ContinuousClock.now) == [.changed(["Connected"])])
        #expect(device.linkLost() == [.changed(["Connected"])])
        #expect(device.connect(adapterPowered: true, timing: Self.timing) == .reply(.inProgress))
        #expect(
            device.connect(adapterPowered: true, timing: Self.timing)
                == .pending(delay: Self.timing.connectTimeout, failure: .abortByLocal))
        #expect(device.requestDisconnect() == (true, false), "Disconnect cancels a pending attempt")
        device.inRange = false
        #expect(
            device.connect(adapterPowered: true, timing: Self.timing)
                == .pending(delay: Self.timing.connectTimeout, failure: .abortByLocal))
    }

    @Test func scenarioFaultsQueueConnectFailures() throws {
        let faults = try Scenario.load("faults")
        let device = DeviceState(spec: faults.devices[0], adapterPath: "/org/bluez/hci0")
        #expect(device.pendingFailures == [.abortByLocal, .abortByLocal])
        #expect(faults.devices[0].faults.disconnectAfter == .seconds(20))
        #expect(faults.devices[0].faults.outOfRange == [.init(after: .seconds(60), duration: .seconds(15))])
    }

    @Test func pairing() throws {
        var device = try Self.strap()
        #expect(device.beginPairing() == .begin(needsConnection: true, needsPasskey: false))
        #expect(device.beginPairing() == .reply(.inProgress))
        #expect(device.finishPairing(success: true) == [.changed(["Bonded"]), .changed(["Paired"])])
        #expect(device.beginPairing() == .failBREDRBonding, "bonded: bluetoothd tries BR/EDR bonding")
        #expect(throws: BlueZError.doesNotExist) { try device.cancelPairing() }
        let lock = try #require(try Scenario.load("pairing").devices.first)
        var lockState = DeviceState(spec: lock, adapterPath: "/org/bluez/hci0")
        #expect(lockState.beginPairing() == .begin(needsConnection: true, needsPasskey: true))
        try lockState.cancelPairing()
        #expect(lockState.finishPairing(success: false) == [])
        #expect(!lockState.paired)
    }

    @Test func nonConnectableTemporaryDevicesGoWhenDiscoveryStops() throws {
        let bthome = try Scenario.load("demo").devices[2]
        var device = DeviceState(spec: bthome, adapterPath: "/org/bluez/hci0")
        _ = device.advertisementSeen(
            at: Self.clock.now, rssi: -70, manufacturerData: [:], serviceData: [:], rssiDeltaThreshold: true,
            duplicateData: false)
        #expect(device.discoveryStopped() == [.removed])
        #expect(device.aliasValue == "BTHome SIM")
        let beacon = DeviceState(spec: try Scenario.load("demo").devices[3], adapterPath: "/org/bluez/hci0")
        #expect(beacon.aliasValue == "C0-FF-EE-00-00-04")
    }
}
