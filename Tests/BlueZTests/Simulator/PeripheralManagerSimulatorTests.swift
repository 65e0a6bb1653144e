import BlueZ
import BlueZSimulator
import Bluetooth
import DBus
import Synchronization
import TestSupport
import Testing

/// `PeripheralManager` (the peripheral role: `GattManager1`, `LEAdvertisingManager1`) against the
/// simulator, with the simulator acting as the remote central that reads, writes and subscribes.
@Suite(.timeLimit(.minutes(1))) struct PeripheralManagerSimulatorTests {
    static let service = BluetoothUUID("6b1e2001-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let counter = BluetoothUUID("6b1e2002-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let command = BluetoothUUID("6b1e2003-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!

    /// What the command characteristic's write handler received.
    final class WriteLog: Sendable {
        let values = Mutex<[[UInt8]]>([])
    }

    static func services(writes: WriteLog) -> [LocalService] {
        [
            LocalService(
                uuid: service,
                characteristics: [
                    LocalCharacteristic(
                        uuid: counter, properties: [.read, .notify],
                        descriptors: [
                            LocalDescriptor(uuid: BluetoothUUID(UInt16(0x2901)), value: Array("Counter".utf8))
                        ]),
                    LocalCharacteristic(
                        uuid: command, properties: [.write],
                        onWrite: { request in writes.values.withLock { $0.append(request.value) } }),
                ])
        ]
    }

    @Test func publishedServicesAreReadWrittenAndNotifiedByTheRemoteCentral() async throws {
        try await SimulatedBlueZ.run { bluez in
            let manager = PeripheralManager(connection: bluez.connection)
            let writes = WriteLog()
            try await manager.publish(Self.services(writes: writes))
            let applications = await bluez.simulator.localApplications()
            #expect(applications.count == 1)
            let published = try #require(applications.first?.services.first)
            #expect(published.uuid == Self.service)
            #expect(published.characteristics.map(\.uuid) == [Self.counter, Self.command])
            #expect(published.characteristics[0].flags == ["read", "notify"])
            #expect(published.characteristics[0].descriptors.map(\.uuid) == [BluetoothUUID(UInt16(0x2901))])

            try await manager.updateValue([7], for: Self.counter)
            #expect(try await bluez.simulator.remoteRead(Self.counter) == [7])
            try await bluez.simulator.remoteWrite(Self.command, [1, 2])
            #expect(writes.values.withLock { $0 } == [[1, 2]])

            try await bluez.simulator.remoteSubscribe(Self.counter)
            #expect(await manager.isNotifying(Self.counter))
            #expect(try await manager.updateValue([8], for: Self.counter))
            #expect(await waitUntil { await bluez.simulator.remoteNotifications(Self.counter) == [[8]] })
            try await bluez.simulator.remoteSubscribe(Self.counter, false)
            #expect(await !manager.isNotifying(Self.counter))

            // A second registration of the same application path by the same client: AlreadyExists.
            await #expect(throws: DBusError(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")) {
                _ = try await bluez.connection.call(
                    destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.GattManager1",
                    method: "RegisterApplication",
                    arguments: [.objectPath("/io/blebridge/peripheral"), .properties([:])])
            }
            await manager.unpublish()
            #expect(await bluez.simulator.localApplications().isEmpty)
            await #expect(throws: DBusError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")) {
                _ = try await bluez.connection.call(
                    destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.GattManager1",
                    method: "UnregisterApplication", arguments: [.objectPath("/io/blebridge/peripheral")])
            }
        }
    }

    @Test func advertisingRegistersWithTheAdapter() async throws {
        try await SimulatedBlueZ.run { bluez in
            let manager = PeripheralManager(connection: bluez.connection)
            func instances() async throws -> (active: UInt8?, free: UInt8?) {
                let reply = try await bluez.connection.call(
                    destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties",
                    method: "GetAll", arguments: [.string("org.bluez.LEAdvertisingManager1")])
                let properties = reply.first?.asDictionary
                return (properties?["ActiveInstances"]?.asByte, properties?["SupportedInstances"]?.asByte)
            }
            let before = try await instances()
            #expect(before.active == 0)
            try await manager.startAdvertising(
                LocalAdvertisement(
                    localName: "Strap", serviceUUIDs: [BluetoothUUID(UInt16(0x180D))],
                    manufacturerData: [0xFFFF: [1, 2]]))
            let advertisement = try #require(await bluez.simulator.registeredAdvertisements().first)
            #expect(advertisement.localName == "Strap")
            #expect(advertisement.type == "peripheral")
            #expect(advertisement.serviceUUIDs == [BluetoothUUID(UInt16(0x180D))])
            #expect(advertisement.manufacturerData == [0xFFFF: [1, 2]])
            let during = try await instances()
            #expect(during.active == 1 && during.free == before.free.map { $0 - 1 })
            await manager.stopAdvertising()
            #expect(await bluez.simulator.registeredAdvertisements().isEmpty)
            #expect(try await instances().active == 0)
            await #expect(throws: DBusError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")) {
                _ = try await bluez.connection.call(
                    destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.LEAdvertisingManager1",
                    method: "UnregisterAdvertisement",
                    arguments: [.objectPath("/io/blebridge/peripheral/advertisement0")])
            }
        }
    }
}
