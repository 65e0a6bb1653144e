import BlueZ
import Bluetooth
import ByteLayouts
import Configuration
import Decoders
import Foundation
import TaskScope
import Timekeeping

extension BLELink {
    // MARK: Subscriptions

    /// Enables every configured subscription's notifications at once (each is a round trip to the
    /// peer through bluetoothd: `AcquireNotify` answers after the peer acknowledged the CCCD write,
    /// 0.3–1.6 s on the loaded VM tier), then keeps their listeners; when one fails, the others are
    /// let go and the first failure is thrown.
    func subscribe(_ id: String, device: DeviceConfiguration, peripheral: Peripheral) async throws {
        cancelSubscriptions(id)
        let pipeline = self.pipeline
        let clock = self.clock
        let logger = self.logger
        let since = clock.now
        // The first value after the connect, logged once (debug): the peer's share of a recovery.
        let firstValue = FirstValueLog()
        var targets: [(GATTCharacteristic, ReadingPipeline.Subscription)] = []
        for subscription in device.subscribe where subscription.mode != .read {
            let entry = try characteristic(
                CharacteristicTarget(subscription.characteristic, service: subscription.service), of: id)
            let context = ReadingPipeline.Subscription(
                characteristic: subscription.characteristic, decoder: subscription.decoder,
                layout: subscription.layout, source: source(entry, device: device),
                command: GatewayModel.stateCommand(
                    characteristic: subscription.characteristic, service: entry.service, of: device))
            targets.append((entry.characteristic, context))
        }
        let results = await withTaskGroup(
            of: (GATTCharacteristic, Result<HeldListener, any Error>).self
        ) { group in
            for (characteristic, context) in targets {
                group.addTask {
                    do {
                        // Runs on the notify socket's thread; the end of the notifications comes with the
                        // disconnection event, which reconnects. `ended` finishes when the link drop
                        // has delivered the socket's last values (what ``stop(until:)`` waits for).
                        let held = try await HeldListener.listening(
                            to: characteristic, of: peripheral,
                            onValue: { value in
                                if firstValue.take() {
                                    logger.debug(
                                        "first notification since subscribing",
                                        [("device", id), ("after", "\((clock.now - since).inSeconds)s")])
                                }
                                pipeline.received(value, device: id, subscription: context, sampleTime: clock.date)
                            })
                        return (characteristic, .success(held))
                    } catch {
                        return (characteristic, .failure(error))
                    }
                }
            }
            var results: [(GATTCharacteristic, Result<HeldListener, any Error>)] = []
            for await result in group { results.append(result) }
            return results
        }
        var failure: (any Error)?
        for (characteristic, result) in results {
            switch result {
            case .success(let listener): listeners[id, default: [:]][characteristic.id] = listener
            case .failure(let error): failure = failure ?? error
            }
        }
        if let failure {
            cancelSubscriptions(id)
            throw failure
        }
    }

    /// Lets go of `id`'s listeners, the configured subscriptions' and the raw `gatt/notify` ones,
    /// without cancelling them (their channels have ended or are ending: each ends once its notify
    /// socket was read to the end); returns them, for a caller that waits for their ends.
    @discardableResult
    func forgetSubscriptions(_ id: String) -> [HeldListener] {
        let held = Array(listeners[id]?.values ?? [:].values) + Array(rawListeners[id]?.values ?? [:].values)
        listeners[id] = nil
        rawListeners[id] = nil
        return held
    }

    func cancelSubscriptions(_ id: String) {
        for held in forgetSubscriptions(id) { held.listener.cancel() }
    }

    func received(
        _ bytes: [UInt8], device id: String, characteristic: BluetoothUUID, decoder: String?, layout: ByteLayout?,
        source: FieldNamer.Source, service: BluetoothUUID? = nil
    ) {
        let command = configuration.device(id: id).flatMap {
            GatewayModel.stateCommand(characteristic: characteristic, service: service, of: $0)
        }
        pipeline.received(
            bytes, device: id,
            subscription: ReadingPipeline.Subscription(
                characteristic: characteristic, decoder: decoder, layout: layout, source: source, command: command),
            sampleTime: clock.date)
    }

    private func readPolled(_ id: String, device: DeviceConfiguration, peripheral: Peripheral) async {
        for subscription in device.subscribe where subscription.mode == .read {
            let target = CharacteristicTarget(subscription.characteristic, service: subscription.service)
            let entry: ResolvedGATT.Entry
            do {
                entry = try characteristic(target, of: id)
            } catch {
                logger.warning("polled characteristic not found", [("device", id), ("reason", error.message)])
                continue
            }
            guard let value = try? await peripheral.readValue(for: entry.characteristic) else { continue }
            received(
                Array(value), device: id, characteristic: subscription.characteristic, decoder: subscription.decoder,
                layout: subscription.layout, source: source(entry, device: device), service: entry.service)
        }
    }

    /// Pool action `poll`: read every polled characteristic, then report.
    func poll(_ id: String) {
        scope.spawn { [self] in await pollNow(id) }
    }

    private func pollNow(_ id: String) async {
        if let peripheral = peripherals[id], let device = configuration.device(id: id) {
            await readPolled(id, device: device, peripheral: peripheral)
        }
        await report(.pollFinished(id))
    }

    /// How long a listener let go at a disconnect the gateway decided may wait for its link to end:
    /// BlueZ takes a link down in well under a second (a few on the emulated VM tier); one still up
    /// after this was not taken down, and its listener must not deliver beside the next connection's.
    static let disconnectDrainLimit: Duration = .seconds(10)

    /// A disconnect the gateway decided (the pool's idle, silent, released and removed devices, the
    /// `disconnect` command). The listeners (the configured subscriptions' and the raw `gatt/notify`
    /// ones) are let go, not cancelled, as at a link drop: the
    /// peripheral ends each once its notify socket was read to the end, so the values the device
    /// sent before its link went down still reach the pipeline (cancelling first dropped what the
    /// notify thread had not read yet). A listener whose link is still up `disconnectDrainLimit`
    /// later (BlueZ did not take it down) is cancelled then, so it cannot outlive a reconnect.
    func disconnect(_ id: String) {
        expectedDisconnects.insert(id)
        guard let central, let peripheral = peripherals[id] else {
            cancelSubscriptions(id)
            scope.spawn { [self] in await report(.disconnected(id, expected: true)) }
            return
        }
        let draining = forgetSubscriptions(id)
        let clock = self.clock
        scope.spawn { [self] in
            await central.cancelConnection(peripheral)
            await self.disconnectedDevice(id)
            guard !draining.isEmpty else { return }
            await Deadline.run(until: clock.now.advanced(by: Self.disconnectDrainLimit), clock: clock) {
                for held in draining {
                    for await _ in held.ended {}
                }
            }
            for held in draining { held.listener.cancel() }
        }
    }

    func disconnected(_ event: DisconnectEvent) async {
        guard let id = peripherals.first(where: { $0.value.identifier == event.identifier })?.key else { return }
        await disconnectedDevice(id)
    }

    private func disconnectedDevice(_ id: String) async {
        // The link is down: the peripheral has ended its subscriptions already, each once its notify
        // socket was read to the end. Cancelling our listeners here (before that read, under load)
        // would drop the notifications sent just before the drop, so they are only let go of; the
        // peripheral's channels release them when they finish. (An expected disconnect cancelled
        // them in `disconnect(_:)` already.)
        forgetSubscriptions(id)
        if reconnectingInPlace.contains(id) { return }
        let expected = expectedDisconnects.remove(id) != nil
        await report(.disconnected(id, expected: expected))
    }

    func remember(_ id: String, peripheral: Peripheral, device: DeviceConfiguration, services: [BluetoothUUID])
        async
    {
        let known = KnownPeripheral(
            deviceID: id, address: peripheral.identifier.string, addressType: peripheral.identifier.type.rawValue,
            services: services.map(\.shortString),
            subscriptions: device.subscribe.filter { $0.mode != .read }.map(\.characteristic.shortString),
            lastSeen: clock.date)
        try? await host.remember(known)
    }
}
