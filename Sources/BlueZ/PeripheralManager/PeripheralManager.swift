import Bluetooth
import DBus
import Logging

/// The peripheral role: this machine serves GATT services and advertises, through BlueZ's
/// `org.bluez.GattManager1.RegisterApplication` and `org.bluez.LEAdvertisingManager1` — the
/// Linux counterpart of Core Bluetooth's `CBPeripheralManager`.
///
/// ```swift
/// let manager = PeripheralManager(connection: bus, adapter: "hci1")
/// try await manager.publish([heartRateService])
/// try await manager.startAdvertising(LocalAdvertisement(localName: "Strap", serviceUUIDs: [.init(UInt16(0x180D))]))
/// try await manager.updateValue([0x06, 72], for: heartRateMeasurementUUID)   // notifies subscribers
/// ```
///
/// Remote reads and writes reach the characteristics' async handlers; subscriptions
/// (`StartNotify`/`StopNotify`, which BlueZ calls when a central writes the CCCD) come out of
/// ``events``.
package actor PeripheralManager {
    package enum Event: Sendable, Equatable {
        case subscribed(BluetoothUUID)
        case unsubscribed(BluetoothUUID)
        case read(BluetoothUUID)
        case wrote(BluetoothUUID, [UInt8], LocalWriteRequest.WriteKind)
    }

    package let adapter: String
    let connection: DBusConnection
    let applicationPath: DBusObjectPath
    let logger = Logger(label: "peripheral")

    /// Per characteristic: its object path, definition, current value and whether notifying.
    struct CharacteristicState {
        var path: DBusObjectPath
        var definition: LocalCharacteristic
        var value: [UInt8] = []
        var notifying = false
    }
    var characteristics: [BluetoothUUID: CharacteristicState] = [:]
    var exportedPaths: [DBusObjectPath] = []
    var registered = false
    var advertising: AdvertisingState?

    package nonisolated let events: AsyncStream<Event>
    let eventContinuation: AsyncStream<Event>.Continuation

    /// - Parameter applicationPath: where the GATT application's object tree is exported; each
    ///   manager on one connection needs its own.
    package init(
        connection: DBusConnection, adapter: String = "hci0",
        applicationPath: DBusObjectPath = "/io/blebridge/peripheral"
    ) {
        self.connection = connection
        self.adapter = adapter
        self.applicationPath = applicationPath
        (events, eventContinuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(1024))
    }

    var adapterPath: DBusObjectPath { DBusObjectPath(stringLiteral: BlueZPaths.adapter(adapter)) }

    /// Exports the services and registers them with BlueZ. Call once; ``unpublish()`` to remove.
    package func publish(_ services: [LocalService]) async throws {
        guard !registered else { throw DBusError(name: .failed, message: "GATT application already published") }
        try await connection.addObjectManager(at: applicationPath)
        for (serviceIndex, service) in services.enumerated() {
            let servicePath = try applicationPath.appending("service\(serviceIndex)")
            let serviceInterface = DBusInterface(
                name: "org.bluez.GattService1", methods: [],
                properties: [
                    Self.constant("UUID", .string(service.uuid.uuidString)),
                    Self.constant("Primary", .boolean(service.isPrimary)),
                    Self.constant("Includes", .objectPaths([])),
                ])
            try await connection.export(path: servicePath, interfaces: [serviceInterface])
            exportedPaths.append(servicePath)
            for (characteristicIndex, characteristic) in service.characteristics.enumerated() {
                let path = try servicePath.appending("char\(characteristicIndex)")
                characteristics[characteristic.uuid] = CharacteristicState(path: path, definition: characteristic)
                try await connection.export(
                    path: path, interfaces: [characteristicInterface(characteristic, service: servicePath)])
                exportedPaths.append(path)
                for (descriptorIndex, descriptor) in characteristic.descriptors.enumerated() {
                    let descriptorPath = try path.appending("desc\(descriptorIndex)")
                    try await connection.export(
                        path: descriptorPath, interfaces: [Self.descriptorInterface(descriptor, characteristic: path)])
                    exportedPaths.append(descriptorPath)
                }
            }
        }
        _ = try await connection.call(
            destination: "org.bluez", path: adapterPath, interface: "org.bluez.GattManager1",
            method: "RegisterApplication", arguments: [.objectPath(applicationPath), .properties([:])])
        registered = true
        logger.info("GATT application published", [("adapter", adapter), ("services", "\(services.count)")])
    }

    /// Unregisters the application and removes its objects.
    package func unpublish() async {
        if registered {
            _ = try? await connection.call(
                destination: "org.bluez", path: adapterPath, interface: "org.bluez.GattManager1",
                method: "UnregisterApplication", arguments: [.objectPath(applicationPath)])
            registered = false
        }
        for path in exportedPaths.reversed() { try? await connection.unexport(path: path) }
        exportedPaths.removeAll()
        characteristics.removeAll()
    }

    /// Sets a characteristic's value. When a central is subscribed, the value is sent to it
    /// (notification or indication, as the characteristic declares); returns whether it was.
    @discardableResult
    package func updateValue(_ value: [UInt8], for uuid: BluetoothUUID) throws -> Bool {
        guard var state = characteristics[uuid] else {
            throw DBusError(name: .invalidArgs, message: "No local characteristic \(uuid)")
        }
        state.value = value
        characteristics[uuid] = state
        guard state.notifying else { return false }
        try connection.emitPropertiesChanged(
            path: state.path, interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes(value)])
        return true
    }

    /// True while a central is subscribed to the characteristic.
    package func isNotifying(_ uuid: BluetoothUUID) -> Bool { characteristics[uuid]?.notifying ?? false }

    // MARK: - D-Bus objects

    static func constant(_ name: String, _ value: DBusValue) -> DBusProperty {
        DBusProperty(name: name, signature: value.signature, get: { value })
    }

    func characteristicInterface(_ characteristic: LocalCharacteristic, service: DBusObjectPath) -> DBusInterface {
        let uuid = characteristic.uuid
        return DBusInterface(
            name: "org.bluez.GattCharacteristic1",
            methods: [
                DBusMethod(name: "ReadValue", inSignature: "a{sv}", outSignature: "ay") { [weak self] call in
                    guard let self else { throw DBusError(name: .failed, message: "Gone") }
                    return [.bytes(try await self.handleRead(uuid, options: call.arguments.first?.asDictionary ?? [:]))]
                },
                DBusMethod(name: "WriteValue", inSignature: "aya{sv}") { [weak self] call in
                    guard let self else { throw DBusError(name: .failed, message: "Gone") }
                    try await self.handleWrite(
                        uuid, value: call.arguments.first?.asBytes ?? [],
                        options: call.arguments.dropFirst().first?.asDictionary ?? [:])
                    return []
                },
                DBusMethod(name: "StartNotify") { [weak self] _ in
                    try await self?.setNotifying(uuid, true)
                    return []
                },
                DBusMethod(name: "StopNotify") { [weak self] _ in
                    try await self?.setNotifying(uuid, false)
                    return []
                },
                DBusMethod(name: "Confirm") { _ in [] },
            ],
            properties: [
                Self.constant("UUID", .string(uuid.uuidString)),
                Self.constant("Service", .objectPath(service)),
                Self.constant("Flags", .strings(characteristic.properties.bluezFlags)),
                DBusProperty(name: "Notifying", signature: "b") { [weak self] in
                    .boolean(await self?.isNotifying(uuid) ?? false)
                },
            ])
    }

    static func descriptorInterface(_ descriptor: LocalDescriptor, characteristic: DBusObjectPath) -> DBusInterface {
        let value = descriptor.value
        return DBusInterface(
            name: "org.bluez.GattDescriptor1",
            methods: [
                DBusMethod(name: "ReadValue", inSignature: "a{sv}", outSignature: "ay") { _ in [.bytes(value)] },
                DBusMethod(name: "WriteValue", inSignature: "aya{sv}") { _ in
                    guard descriptor.writable else {
                        throw DBusError(
                            name: DBusErrorName("org.bluez.Error.NotPermitted"), message: "Write not permitted")
                    }
                    return []
                },
            ],
            properties: [
                constant("UUID", .string(descriptor.uuid.uuidString)),
                constant("Characteristic", .objectPath(characteristic)),
                constant("Flags", .strings(descriptor.writable ? ["read", "write"] : ["read"])),
            ])
    }

    // MARK: - Requests from BlueZ

    func handleRead(_ uuid: BluetoothUUID, options: [String: DBusValue]) async throws -> [UInt8] {
        guard let state = characteristics[uuid] else { throw DBusError(name: .unknownObject, message: "Gone") }
        let request = LocalReadRequest(
            device: options["device"]?.unwrappedVariant.asObjectPath?.rawValue,
            offset: Int(options["offset"]?.unwrappedVariant.asUInt16 ?? 0),
            mtu: options["mtu"]?.unwrappedVariant.asUInt16.map(Int.init))
        eventContinuation.yield(.read(uuid))
        let value: [UInt8]
        if let handler = state.definition.onRead {
            do { value = try await handler(request) } catch { throw error.dbusError }
        } else {
            value = state.value
        }
        guard request.offset <= value.count else {
            throw ATTError(.invalidOffset, "Invalid offset").dbusError
        }
        return Array(value[request.offset...])
    }

    func handleWrite(_ uuid: BluetoothUUID, value: [UInt8], options: [String: DBusValue]) async throws {
        guard let state = characteristics[uuid] else { throw DBusError(name: .unknownObject, message: "Gone") }
        let kind =
            options["type"]?.unwrappedVariant.asString.flatMap(LocalWriteRequest.WriteKind.init(rawValue:)) ?? .request
        let request = LocalWriteRequest(
            device: options["device"]?.unwrappedVariant.asObjectPath?.rawValue, value: value,
            offset: Int(options["offset"]?.unwrappedVariant.asUInt16 ?? 0), type: kind,
            mtu: options["mtu"]?.unwrappedVariant.asUInt16.map(Int.init))
        if let handler = state.definition.onWrite {
            do { try await handler(request) } catch { throw error.dbusError }
        }
        if var current = characteristics[uuid] {
            current.value = value
            characteristics[uuid] = current
        }
        eventContinuation.yield(.wrote(uuid, value, kind))
    }

    func setNotifying(_ uuid: BluetoothUUID, _ on: Bool) throws {
        guard var state = characteristics[uuid] else { return }
        guard state.definition.properties.canNotify else {
            throw DBusError(name: DBusErrorName("org.bluez.Error.NotSupported"), message: "Operation is not supported")
        }
        guard state.notifying != on else { return }
        state.notifying = on
        characteristics[uuid] = state
        try connection.emitPropertiesChanged(
            path: state.path, interface: "org.bluez.GattCharacteristic1", changed: ["Notifying": .boolean(on)])
        eventContinuation.yield(on ? .subscribed(uuid) : .unsubscribed(uuid))
    }
}
