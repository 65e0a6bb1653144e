import Bluetooth
import DBus
import Foundation
import Logging
import Timekeeping

/// Notifications and indications: enabling (`AcquireNotify`, else `StartNotify`), sharing between
/// listeners, and their end.
extension Peripheral {
    // MARK: Notifications

    /// Values the characteristic notifies or indicates, as a stream. Enables notifications before returning
    /// (`AcquireNotify` where BlueZ offers it: a socket read by the process's one notify thread; else `StartNotify` and
    /// `PropertiesChanged`), shares them between all listeners, and disables them when the last listener stops.
    /// The stream ends with `peripheralDisconnected` when the link drops: subscribe again after reconnecting.
    public func notifications(for characteristic: GATTCharacteristic) async throws -> AsyncThrowingStream<
        Data, any Error
    > {
        try await retryingAfterPairing { try await subscribe(to: characteristic) }
    }

    /// Delivers the characteristic's values to `onValue` on the thread that receives them (the
    /// `AcquireNotify` socket thread, or the D-Bus thread, as the `PropertiesChanged` signal is
    /// dispatched, for `StartNotify`: indications), in order, with no task, stream or actor hop: for hot paths that do little and hand the value on. `onEnd` runs once
    /// when the notifications end by themselves (the peripheral disconnected; the error says why),
    /// never after ``NotificationListener/cancel()``. Both must return quickly: they hold up every
    /// other notification of the process. Enabling works, fails and is shared exactly as for
    /// ``notifications(for:)``; notifications stop when the last listener of the characteristic leaves.
    public func notifications(
        for characteristic: GATTCharacteristic, onValue: @escaping @Sendable (Data) -> Void,
        onEnd: @escaping @Sendable ((any Error)?) -> Void = { _ in }
    ) async throws -> NotificationListener {
        try await listener(for: characteristic, .handler(onValue: onValue, onEnd: onEnd))
    }

    /// ``notifications(for:onValue:onEnd:)`` with each value as bytes: on the `AcquireNotify` path one
    /// allocation a value instead of three (a `Data`, then the caller's copy of it). A name of its own:
    /// an overload would make a trailing closure that does not name its parameter's type ambiguous.
    public func notificationBytes(
        for characteristic: GATTCharacteristic, onValue: @escaping @Sendable ([UInt8]) -> Void,
        onEnd: @escaping @Sendable ((any Error)?) -> Void = { _ in }
    ) async throws -> NotificationListener {
        try await listener(for: characteristic, .bytes(onValue: onValue, onEnd: onEnd))
    }

    private func listener(for characteristic: GATTCharacteristic, _ listener: NotificationChannel.Listener)
        async throws -> NotificationListener
    {
        try await retryingAfterPairing {
            let (path, channel, id) = try await listen(to: characteristic, with: listener)
            let scope = self.scope
            return NotificationListener { [weak self] in
                // At once, not in the task: values that arrive after cancel() returned must not reach
                // the handler (a re-subscription would otherwise see them twice).
                _ = channel.remove(id)
                guard let self else { return }
                scope.spawn { await self.listenerEnded(path, channel: channel, id: id) }
            }
        }
    }

    private func subscribe(to characteristic: GATTCharacteristic) async throws -> AsyncThrowingStream<Data, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Data.self, bufferingPolicy: .bufferingNewest(4096))
        let (path, channel, id) = try await listen(to: characteristic, with: .stream(continuation))
        let scope = self.scope
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            scope.spawn { await self.listenerEnded(path, channel: channel, id: id) }
        }
        return stream
    }

    /// Enables notifications (once per characteristic, shared) and adds `listener` to its channel.
    private func listen(to characteristic: GATTCharacteristic, with listener: NotificationChannel.Listener)
        async throws -> (DBusObjectPath, NotificationChannel, Int)
    {
        let characteristic = try current(characteristic)
        guard characteristic.properties.canNotify else {
            throw BluetoothError(
                .operationNotSupported,
                "\(characteristic.uuid) can neither notify nor indicate \(characteristic.properties)")
        }
        let path = DBusObjectPath(trusted: characteristic.id)
        let subscription: Subscription
        if let existing = subscriptions[path] {
            subscription = existing
        } else {
            let channel = NotificationChannel()
            let properties = characteristic.properties
            // Awaited by every listener that comes while it runs (a task, not a scope child: its
            // result is shared); it ends with its BlueZ calls, bounded by their time-out, or when a
            // listener's wait, a scope child, is cancelled by the manager's close (awaitEnabling).
            let enabling = Task { try await self.enable(path, channel: channel, properties: properties) }
            subscription = Subscription(channel: channel, reader: nil, enabling: enabling)
            subscriptions[path] = subscription
        }
        do {
            if let enabling = subscription.enabling { try await awaitEnabling(path, enabling) }
        } catch {
            if subscriptions[path]?.channel === subscription.channel { subscriptions[path] = nil }
            throw BluetoothError.from(error, during: .notify)
        }
        guard let id = subscription.channel.add(listener) else {
            throw BluetoothError(.peripheralDisconnected, "the peripheral disconnected while enabling notifications")
        }
        return (path, subscription.channel, id)
    }

    /// Waits for `enabling` to end, or fails at once with the disconnect error when the link drops while
    /// BlueZ has not answered the enabling's call (`failPendingOperations`), as a read or write does:
    /// bluetoothd 5.82 never answers an `AcquireNotify` or `StartNotify` whose security raise the peer
    /// refused, the link drops, and only the call's time-out would end it (Debian 13 VM tier, 2026-12-07).
    /// An answer that came before the drop stands (5.66 answers ATT error 0x0e, then drops the link):
    /// it is noted on the D-Bus thread as it is dispatched (``enablingCall(_:channel:method:arguments:)``).
    /// The enabling itself goes on until BlueZ answers or the call times out; it acquires nothing for
    /// a subscription that ended (``enable(_:channel:properties:)``).
    private func awaitEnabling(_ path: DBusObjectPath, _ enabling: Task<Void, any Error>) async throws {
        nextID += 1
        let id = nextID
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let once = ResumeOnce(continuation)
            subscriptions[path]?.waiters[id] = { error in once.resume(with: .failure(error)) }
            let awaiting = scope.spawn {
                // Closing the manager cancels the enabling's unanswered call rather than waiting for its
                // time-out (bluetoothd 5.82 never answers a refused raise's).
                let result = await withTaskCancellationHandler {
                    await enabling.result
                } onCancel: {
                    enabling.cancel()
                }
                once.resume(with: result)
                await self.enablingWaitEnded(path, id)
            }
            if !awaiting {
                once.resume(with: .failure(BluetoothError(.operationCancelled, "the central manager is closed")))
                enablingWaitEnded(path, id)
            }
        }
    }

    private func enablingWaitEnded(_ path: DBusObjectPath, _ id: Int) {
        subscriptions[path]?.waiters[id] = nil
    }

    /// One BlueZ call of the enabling of `channel`'s notifications; while it is unanswered a link drop
    /// fails the listeners waiting for the enabling.
    private func enablingCall(
        _ path: DBusObjectPath, channel: NotificationChannel, method: String, arguments: [DBusValue] = []
    ) async throws -> [DBusValue] {
        if subscriptions[path]?.channel === channel { subscriptions[path]?.awaitingAnswer = true }
        // On the D-Bus thread, which this actor is pinned to, as the answer is dispatched.
        let answered: @Sendable (DBusErrorName?) -> Void = { [weak self] _ in
            self?.assumeIsolated { peripheral in
                if peripheral.subscriptions[path]?.channel === channel {
                    peripheral.subscriptions[path]?.awaitingAnswer = false
                }
            }
        }
        let call = try connection.startCall(
            destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic, method: method,
            arguments: arguments, timeout: callTimeout, whenAnswered: answered)
        return try await call.reply()
    }

    /// How many listeners the characteristic's notifications have (tests: one per subscriber).
    package func notificationListenerCount(_ characteristic: GATTCharacteristic) -> Int {
        subscriptions[DBusObjectPath(trusted: characteristic.id)]?.channel.listenerCount ?? 0
    }

    /// Whether notifications are currently enabled on the characteristic by this process.
    public func isNotifying(_ characteristic: GATTCharacteristic) -> Bool {
        let path = DBusObjectPath(trusted: characteristic.id)
        guard let subscription = subscriptions[path] else { return false }
        if subscription.reader != nil { return true }
        return gattObject(path, BlueZNames.gattCharacteristic)?["Notifying"]?.asBool ?? false
    }

    private func enable(_ path: DBusObjectPath, channel: NotificationChannel, properties: CharacteristicProperties)
        async throws
    {
        try requireReady()
        if properties.contains(.notify) {
            do {
                let reply = try await enablingCall(
                    path, channel: channel, method: "AcquireNotify", arguments: [.properties([:])])
                if let descriptor = reply.first?.asFileDescriptor {
                    let fd = try descriptor.duplicate()
                    if let mtu = reply.dropFirst().first?.asUInt16 { acquiredMTU = max(acquiredMTU ?? 0, Int(mtu)) }
                    let scope = self.scope
                    let reader = notifyPoller.add(
                        fd: fd, onValue: { channel.yield(bytes: $0) },
                        onEnd: { [weak self] in
                            guard let self else { return }
                            scope.spawn { await self.acquiredSocketEnded(path, channel: channel) }
                        })
                    if subscriptions[path]?.channel === channel {
                        subscriptions[path]?.reader = reader
                    } else {
                        reader.stop()  // every listener left while BlueZ was answering
                    }
                    return
                }
            } catch {
                let mapped = BluetoothError.from(error, during: .notify)
                switch mapped.code {
                // The peer's own ATT error (its CCCD write failed; 0x0e after a refused pairing) would fail
                // StartNotify the same way, on a link bluetoothd is dropping: that error is the answer.
                case .notConnected, .peripheralDisconnected, .resetting, .notPoweredOn, .attributeError: throw mapped
                default: break  // fall back to StartNotify (indications, NotifyAcquired by someone else, …)
                }
            }
        }
        // Not for a subscription that ended while AcquireNotify was unanswered (the link dropped, or every
        // listener left): bluetoothd keeps a StartNotify session of a disconnected device for its next
        // connection, which would enable notifications nobody asked for.
        guard subscriptions[path]?.channel === channel else {
            throw BluetoothError(.peripheralDisconnected, "the subscription ended while BlueZ was answering")
        }
        try requireReady()
        do {
            _ = try await enablingCall(path, channel: channel, method: "StartNotify")
        } catch {
            throw BluetoothError.from(error, during: .notify)
        }
    }

    private func listenerEnded(_ path: DBusObjectPath, channel: NotificationChannel, id: Int) async {
        guard channel.remove(id) == 0, let subscription = subscriptions[path], subscription.channel === channel else {
            return
        }
        subscriptions[path] = nil
        if let reader = subscription.reader {
            reader.stop()  // closing our end makes BlueZ disable notifications
        } else if lifecycle.state == .ready {
            _ = try? await connection.call(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic,
                method: "StopNotify", timeout: callTimeout)
        }
    }

    private func acquiredSocketEnded(_ path: DBusObjectPath, channel: NotificationChannel) async {
        // BlueZ closes the socket as the link drops, just before it sends Connected=false; the signal can reach
        // this actor later (signals and replies take separate paths here). BlueZ's answer to a Get comes after
        // that signal on the bus: when it says the link is down, the signal is on its way and ends the stream
        // with the real reason (`failPendingOperations`). Otherwise the socket ended on its own.
        if lifecycle.state == .ready, await linkReportedDown() { return }
        guard let subscription = subscriptions[path], subscription.channel === channel else { return }
        subscriptions[path] = nil
        channel.finish(
            throwing: lifecycle.state == .ready
                ? BluetoothError(.failed, "BlueZ closed the notification socket")
                : BluetoothError(.peripheralDisconnected))
    }

    /// Whether BlueZ says `Connected` is false now (nil answer: unknown, treated as up).
    private func linkReportedDown() async -> Bool {
        let reply = try? await connection.call(
            destination: BlueZNames.service, path: path, interface: BlueZNames.properties, method: "Get",
            arguments: [.string(BlueZNames.device), .string("Connected")], timeout: callTimeout)
        return reply?.first?.asBool == false
    }
}
