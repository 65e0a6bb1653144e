import BlueZ
import Bluetooth
import ByteLayouts
import Configuration
import Decoders
import Foundation
import Timekeeping

extension BLELink {
    // MARK: Connections

    /// Connects, resolves services, subscribes to every configured characteristic (verifying
    /// each notifies), reads the polled ones once, then reports to the gateway.
    ///
    /// One attempt per device at a time: a request while one runs is left to it (its outcome is
    /// reported as usual). Two attempts both subscribed to the same peripheral, and the second's
    /// listener replaced the first's without ending it, so every notification became two readings
    /// until the link dropped (the pool asks again when an adapter power cycle or a disconnection
    /// sets a connecting device idle before its attempt has ended).
    func connect(_ id: String) {
        guard let central, let device = configuration.device(id: id) else {
            scope.spawn { [self] in await report(.connectFailed(id, error: "not seen by the adapter")) }
            return
        }
        guard !stopped else { return }
        guard connecting.insert(id).inserted else {
            logger.debug("connect already under way", [("device", id)])
            return
        }
        let timeout = configuration.bluetooth.connectTimeout
        nextConnectTask += 1
        let token = nextConnectTask
        // Assigned before the task can reach the link (the link is busy until this returns), so
        // the task's own removal at its end comes after it.
        connectTasks[token] = scope.spawnCancellable { [self] in
            await connectAttempt(token, id, device: device, central: central, timeout: timeout)
        }
        if connectTasks[token] == nil { connecting.remove(id) }  // the scope is closed: nothing runs
    }

    /// The connect task of ``connect(_:)``, from the link's executor.
    private func connectAttempt(
        _ token: Int, _ id: String, device: DeviceConfiguration, central: CentralManager, timeout: Duration
    ) async {
        defer {
            connectTasks[token] = nil
            connecting.remove(id)
        }
        // The device forgotten and found again during recovery is a new peripheral.
        guard var peripheral = await peripheral(forConnecting: id, central: central) else {
            await report(.unseen(id))
            return
        }
        var timeline = ConnectTimeline(at: clock.now)
        do {
            try Task.checkCancellation()
            try await central.connect(peripheral, timeout: timeout)
            timeline.step("connect", at: clock.now)
            var services = try await resolve(id, peripheral: peripheral)
            timeline.step("resolve", at: clock.now)
            while let missing = missingConfiguredAttribute(id, device: device) {
                // Waits for late characteristics, reconnects, or forgets and rediscovers the device, in
                // place; or throws (given up, with the fix).
                peripheral = try await recoverMissing(
                    id, missing, device: device, peripheral: peripheral, central: central, timeout: timeout)
                services = try await resolve(id, peripheral: peripheral)
                timeline.step("recovery", at: clock.now)
            }
            cacheRecovery[id]?.servicesComplete()
            try await subscribe(id, device: device, peripheral: peripheral)
            timeline.step("subscribe", at: clock.now)
            await remember(id, peripheral: peripheral, device: device, services: services)
            // The link can drop while the state database stores the peripheral (a slow SD card),
            // and its disconnection may have been reported already: `connected` after it left the
            // pool holding a link that was gone, and a keep-connected device was never connected
            // again. Read and reported in one step of the link's executor (the peripheral is on it
            // too), so a drop after this check is reported after `connected`. Its listeners are let
            // go by the disconnection (after their sockets were read to the end).
            guard await peripheral.state == .connected else {
                await report(.connectFailed(id, error: "the link dropped before the connection was complete"))
                return
            }
            await report(.connected(id, services: services.map(\.shortString)))
            timeline.step("report", at: clock.now)
            logger.debug("connect timeline", [("device", id)] + timeline.fields)
            await describe(id, peripheral: peripheral)
        } catch {
            cancelSubscriptions(id)
            expectedDisconnects.insert(id)
            await central.cancelConnection(peripheral)
            let reason = (error as? BluetoothError).flatMap(Self.refusedPairing) ?? "\(error)"
            await report(.connectFailed(id, error: reason))
        }
    }

    /// The peripheral to connect `id` to: the one discovery or the restoration found, else the one BlueZ knows
    /// at the address `id` had in an earlier connection. The restoration at power-on can run before bluetoothd
    /// exported its stored devices again (after a bluetoothd restart by SIGTERM the simulator's pool asked to
    /// connect 1 ms after the power-on and failed "not seen by the adapter", then waited out a 1–5 s backoff).
    private func peripheral(forConnecting id: String, central: CentralManager) async -> Peripheral? {
        if let known = peripherals[id] { return known }
        guard let entry = try? await host.knownPeripherals().first(where: { $0.deviceID == id }),
            let address = BluetoothAddress(entry.address),
            let restored = await central.retrievePeripherals(withIdentifiers: [address]).first
        else { return nil }
        if peripherals[id] == nil { peripherals[id] = restored }
        logger.info("restored known peripheral at connect", [("device", id), ("address", entry.address)])
        return peripherals[id]
    }

    /// Reads the manufacturer, model and firmware of the Device Information service (when the
    /// device has it; once per run) for the Home Assistant device block.
    private func describe(_ id: String, peripheral: Peripheral) async {
        guard !described.contains(id) else { return }
        var strings: [UInt16: String] = [:]
        for uuid: UInt16 in [0x2A29, 0x2A24, 0x2A26] {
            let target = CharacteristicTarget(BluetoothUUID(uuid), service: BluetoothUUID(UInt16(0x180A)))
            guard let entry = try? characteristic(target, of: id),
                let value = try? await peripheral.readValue(for: entry.characteristic)
            else { continue }
            let text = String(decoding: Array(value).prefix { $0 != 0 }, as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { strings[uuid] = text }
        }
        described.insert(id)
        guard !strings.isEmpty else { return }
        await report(
            .described(id, manufacturer: strings[0x2A29], model: strings[0x2A24], firmware: strings[0x2A26]))
    }

    /// The connect rules of every peripheral: the library's, with the configured resolve limit for cached devices.
    var connectionLifecycle: ConnectionLifecycle.Configuration {
        var lifecycle = ConnectionLifecycle.Configuration()
        lifecycle.cachedResolveTimeout = configuration.bluetooth.cachedResolveTimeout
        return lifecycle
    }

    /// One call into the peripheral: its services come with their characteristics (a call per service
    /// rebuilt the whole tree each time; the step took 0.46 s on the loaded VM tier).
    func resolve(_ id: String, peripheral: Peripheral) async throws -> [BluetoothUUID] {
        let services = try await peripheral.discoverServices()
        gatt[id] = ResolvedGATT(device: id, services: services.map { ($0.uuid, $0.characteristics) })
        return services.map(\.uuid)
    }

    /// Whether a subscribed characteristic the resolved tree lacks is one the device served before at this
    /// address (``LateCharacteristicPolicy``), so it may be late rather than absent.
    func servedBefore(_ id: String, device: DeviceConfiguration, address: String) async -> Bool {
        let policy = LateCharacteristicPolicy()
        let known = (try? await host.knownPeripherals()) ?? []
        return device.subscribe.contains { subscription in
            subscription.mode != .read
                && (try? characteristic(
                    CharacteristicTarget(subscription.characteristic, service: subscription.service), of: id)) == nil
                && policy.waits(for: subscription.characteristic, device: id, address: address, known: known)
        }
    }

    /// Waits until `deadline` for the subscribed characteristics the resolved tree lacks; the caller
    /// resolves again afterwards. A characteristic that does not appear is left to the next recovery step.
    func awaitLateCharacteristics(
        _ id: String, device: DeviceConfiguration, peripheral: Peripheral, until deadline: ContinuousClock.Instant
    ) async throws {
        for subscription in device.subscribe where subscription.mode != .read {
            let target = CharacteristicTarget(subscription.characteristic, service: subscription.service)
            let missing: CommandFailure
            do {
                _ = try characteristic(target, of: id)
                continue
            } catch {
                missing = error
            }
            let left = deadline - clock.now
            guard left > .zero else { break }
            logger.info(
                "waiting for the device to show a subscribed characteristic it served before",
                [("device", id), ("reason", missing.message)])
            let found = try await peripheral.waitForCharacteristic(
                subscription.characteristic, service: subscription.service, timeout: left)
            if found == nil { break }
        }
    }

    /// The first configured subscription the resolved GATT tree cannot serve, as the failure naming it.
    func missingConfiguredAttribute(_ id: String, device: DeviceConfiguration) -> CommandFailure? {
        for subscription in device.subscribe {
            do {
                _ = try characteristic(
                    CharacteristicTarget(subscription.characteristic, service: subscription.service), of: id)
            } catch {
                return error
            }
        }
        return nil
    }

    /// The characteristic a subscription or command means (within its service when it names one).
    func characteristic(_ target: CharacteristicTarget, of id: String) throws(CommandFailure)
        -> ResolvedGATT.Entry
    {
        guard let gatt = gatt[id] else { throw CommandFailure(.deviceUnavailable, "\(id) is not connected") }
        return try gatt.find(target)
    }

    /// How readings of `entry` are named: its subscription's rank, characteristic and service names.
    func source(_ entry: ResolvedGATT.Entry, device: DeviceConfiguration?) -> FieldNamer.Source {
        let subscriptions = device?.subscribe ?? []
        let uuid = entry.characteristic.uuid
        let rank =
            subscriptions.firstIndex { $0.characteristic == uuid && ($0.service == nil || $0.service == entry.service) }
            ?? subscriptions.count
        return FieldNamer.Source(
            rank: rank, characteristic: FieldNamer.characteristicName(uuid),
            service: AssignedNumbers.serviceName(for: entry.service))
    }

    /// The layout of the subscription `source` ranks as, if any (a fresh read or raw notification of a
    /// subscribed characteristic decodes like its subscription).
    static func layout(of source: FieldNamer.Source, device: DeviceConfiguration?) -> ByteLayout? {
        guard let subscriptions = device?.subscribe, subscriptions.indices.contains(source.rank) else { return nil }
        return subscriptions[source.rank].layout
    }
}
