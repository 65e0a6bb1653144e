import Bluetooth
import DBus

/// `org.bluez.Device1` behaviour: connections, disconnections, pairing.
extension BlueZSimulator {
    func connect(_ call: DBusMethodCall) async throws {
        let key = try key(forDevicePath: call.path.rawValue)
        try await connectDevice(key, replyNotice: call.replyNotice)
    }

    /// Runs `Connect` for a device: a pending attempt, then `Connected` true and the reply as soon as
    /// the link is up (bluetoothd answers from its ATT connect callback); GATT discovery follows,
    /// ending in `ServicesResolved` true after the reply.
    func connectDevice(_ key: String, replyNotice: DBusReplyNotice? = nil) async throws {
        let plan = devices[key]!.connect(adapterPowered: adapter.powered, timing: timing)
        switch plan {
        case .reply(nil):
            return
        case .reply(let error?):
            throw error.dbus
        case .pending(let delay, let failure):
            let attempt = nextConnectAttempt(key)
            schedule(key, after: delay) { simulator in
                await simulator.connectAttemptEnded(key, attempt: attempt, failure: failure)
            }
            try await waitForConnect(key, replyNotice: replyNotice)
        case .linkUpThenAbort(let delay):
            let attempt = nextConnectAttempt(key)
            schedule(key, after: delay) { simulator in
                await simulator.connectAborted(key, attempt: attempt)
            }
            try await waitForConnect(key, replyNotice: replyNotice)
        }
    }

    private func nextConnectAttempt(_ key: String) -> Int {
        let attempt = (connectAttempts[key] ?? 0) + 1
        connectAttempts[key] = attempt
        return attempt
    }

    func waitForConnect(_ key: String, replyNotice: DBusReplyNotice?) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            pendingConnects[key, default: []].append(PendingConnect(continuation: continuation, notice: replyNotice))
        }
    }

    /// Answers every waiting `Connect`; returns their reply notices (to order signals after the replies).
    @discardableResult
    func resumeConnects(_ key: String, error: BlueZError?) -> [DBusReplyNotice] {
        let waiters = pendingConnects.removeValue(forKey: key) ?? []
        for waiter in waiters {
            if let error { waiter.continuation.resume(throwing: error.dbus) } else { waiter.continuation.resume() }
        }
        return waiters.compactMap(\.notice)
    }

    func connectAttemptEnded(_ key: String, attempt: Int, failure: BlueZError?) async {
        guard connectAttempts[key] == attempt, devices[key]?.link == .connecting else { return }
        if let failure {
            devices[key]!.connectFailed()
            resumeConnects(key, error: failure)
            return
        }
        await apply(devices[key]!.connectionEstablished(at: clock.now), to: key)
        // The reply goes out with the link up, before any GATT object or `ServicesResolved`.
        for notice in resumeConnects(key, error: nil) { await notice.queued() }
        guard connectAttempts[key] == attempt, devices[key]?.link == .connected else { return }
        // A stalled GATT exchange: the link stays up, unresolved, until someone disconnects it.
        guard !devices[key]!.takeResolveStall() else { return }
        schedule(key, after: timing.resolveDelay) { simulator in
            await simulator.resolveEnded(key, attempt: attempt)
        }
    }

    /// `le-connection-abort-by-local`: the link came up (`Connected` true) and was aborted before
    /// ATT was up; Connect fails, then `Connected` goes false (bleak ≥ 1.0 waits for that before it retries).
    func connectAborted(_ key: String, attempt: Int) async {
        guard connectAttempts[key] == attempt, devices[key]?.link == .connecting else { return }
        await apply(devices[key]!.connectionEstablished(at: clock.now), to: key)
        let effects = devices[key]!.linkLost()
        connectAttempts[key, default: 0] += 1
        for notice in resumeConnects(key, error: BlueZError.abortByLocal) { await notice.queued() }
        await apply(effects, to: key)
    }

    func resolveEnded(_ key: String, attempt: Int) async {
        guard connectAttempts[key] == attempt, devices[key]?.link == .connected else { return }
        // Objects first (the export suspends this actor, and `ServicesResolved` must read false meanwhile).
        await apply(devices[key]!.exportServices(), to: key)
        guard connectAttempts[key] == attempt, devices[key]?.link == .connected else { return }
        await apply(devices[key]!.markResolved(), to: key)
        await exportBattery(key)
        if let after = devices[key]!.spec.faults.disconnectAfter {
            schedule(key, after: after) { simulator in
                guard await simulator.connectAttempts[key] == attempt else { return }
                await simulator.linkDown(key, pendingError: nil)
            }
        }
    }

    /// `Disconnect` answers once the link is down; `Connected` false goes out only after that
    /// reply has been queued (``DBusReplyNotice``), as bluetoothd answers before it emits.
    func disconnect(_ call: DBusMethodCall) async {
        guard let key = try? key(forDevicePath: call.path.rawValue) else { return }
        await disconnectDevice(key, replyNotice: call.replyNotice)
    }

    /// `Disconnect`: cancels a pending attempt, or drops the link after bluetoothd's disconnect timer.
    func disconnectDevice(_ key: String, replyNotice: DBusReplyNotice? = nil) async {
        let result = devices[key]!.requestDisconnect()
        if result.cancelledAttempt {
            cancelDeviceTasks(key)
            resumeConnects(key, error: BlueZError.failed("br-connection-canceled"))
            return
        }
        guard result.mustWait else { return }
        if !disconnectTimers.contains(key) {
            disconnectTimers.insert(key)
            let attempt = connectAttempts[key]
            schedule(key, after: options.disconnectDelay) { simulator in
                guard await simulator.connectAttempts[key] == attempt else { return }
                await simulator.linkDown(key, pendingError: nil)
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            pendingDisconnects[key, default: []].append(
                PendingDisconnect(continuation: continuation, notice: replyNotice))
        }
    }

    /// The link is gone (disconnect timer, remote drop, out of range, power off): signals, sockets, waiters.
    func linkDown(_ key: String, pendingError: BlueZError?) async {
        cancelDeviceTasks(key)
        disconnectTimers.remove(key)
        connectAttempts[key, default: 0] += 1
        let wasConnecting = devices[key]!.link == .connecting
        let effects = devices[key]!.linkLost()
        // bluetoothd's device_remove_connection: `ServicesResolved` false, then the pending Connect
        // and Disconnect calls are answered, then `Connected` goes false (clients such as bleak
        // close their bus on that signal).
        let connectedChange = DeviceState.Effect.changed(["Connected"])
        await unexportBattery(key)
        await apply(effects.filter { $0 != connectedChange }, to: key)
        resumeConnects(
            key,
            error: wasConnecting
                ? (pendingError ?? BlueZError.abortByLocal) : BlueZError.failed("br-connection-canceled"))
        let waiters = pendingDisconnects.removeValue(forKey: key) ?? []
        for waiter in waiters { waiter.continuation.resume() }
        // Each Disconnect reply is queued on the bus connection before the signal below: the
        // connection sends in submission order, so every client sees the reply first.
        for waiter in waiters { await waiter.notice?.queued() }
        if effects.contains(connectedChange) { await apply([connectedChange], to: key) }
        if devices[key]!.bonding {
            _ = devices[key]!.finishPairing(success: false)
            pairingEnded(key)
        }
    }

    /// Runs `body` after `delay` unless the device's timers are cancelled or the simulator restarts.
    func schedule(_ key: String, after delay: Duration, _ body: @escaping @Sendable (BlueZSimulator) async -> Void) {
        let generation = self.generation
        let task = Task { [weak self] in
            // Real delay: simulated radio timing (connect, resolve, disconnect delays).
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled, let self, await self.generation == generation else { return }
            await body(self)
        }
        deviceTasks[key, default: []].append(task)
        deviceTasks[key]!.removeAll { $0.isCancelled }
    }

    func cancelDeviceTasks(_ key: String) {
        for task in deviceTasks.removeValue(forKey: key) ?? [] { task.cancel() }
    }

    /// `ConnectProfile`: bluetoothd connects profiles over BR/EDR (`connect_profiles` with
    /// BDADDR_BREDR); it first browses SDP, which an LE-only controller cannot (measured in the VM:
    /// `Failed` "br-connection-sdp-search").
    func connectProfile(_ call: DBusMethodCall) throws {
        let key = try key(forDevicePath: call.path.rawValue)
        if devices[key]!.link == .connecting {
            throw BlueZError(name: BlueZError.prefix + "InProgress", message: "br-connection-busy").dbus
        }
        guard adapter.powered else {
            throw BlueZError(name: BlueZError.prefix + "NotReady", message: "br-connection-adapter-not-powered").dbus
        }
        throw BlueZError.failed("br-connection-sdp-search").dbus
    }

    // MARK: Pairing

    func pair(_ call: DBusMethodCall) async throws {
        let key = try key(forDevicePath: call.path.rawValue)
        switch devices[key]!.beginPairing() {
        case .reply(let error):
            throw error.dbus
        case .failBREDRBonding:
            if devices[key]!.connected { await linkDown(key, pendingError: nil) }
            throw BlueZError.authenticationFailed.dbus
        case .begin(let needsConnection, let needsPasskey):
            var success = false
            defer { finishPairing(key, success: success) }
            if needsConnection {
                do {
                    try await connectDevice(key)
                } catch {
                    throw error
                }
            }
            guard devices[key]!.bonding else { throw BlueZError.authenticationCanceled.dbus }
            if devices[key]!.spec.refusesPairing {
                // The pairing's status maps to AuthenticationFailed in bluetoothd (not measured for `Pair`
                // itself: the VM tier measured the security raise, see refusePairing).
                await refusePairing(key, answering: call)
                throw BlueZError.authenticationFailed.dbus
            }
            if needsPasskey {
                try await authenticate(key, agent: agents.agent(for: call.sender))
            }
            guard devices[key]!.bonding else { throw BlueZError.authenticationCanceled.dbus }
            success = true
        }
    }

    func finishPairing(_ key: String, success: Bool) {
        guard devices[key] != nil else { return pairingEnded(key) }
        let effects = devices[key]!.finishPairing(success: success)
        for case .changed(let names) in effects { emitDevice(key, names) }
        pairingEnded(key)
    }

    /// Asks `agent` (the caller's or the default one) for the passkey the device displays.
    func requestPasskey(_ key: String, agent: AgentRegistry.Agent?) async throws {
        let reply = try await ask(
            agent, "RequestPasskey", about: key, capabilities: ["DisplayYesNo", "KeyboardOnly", "KeyboardDisplay"])
        guard let passkey = reply.first?.asUInt32, passkey == devices[key]!.spec.passkey else {
            throw BlueZError.authenticationFailed.dbus
        }
    }

    /// Asks `agent` to confirm the number the device displays (numeric comparison); an empty reply accepts.
    func requestConfirmation(_ key: String, agent: AgentRegistry.Agent?) async throws {
        _ = try await ask(
            agent, "RequestConfirmation", about: key, capabilities: ["DisplayYesNo", "KeyboardDisplay"],
            extra: [.uint32(devices[key]!.spec.passkey ?? 0)])
    }

    /// Calls an `org.bluez.Agent1` question about the device; an agent missing, or without one of
    /// `capabilities`, fails the pairing, and its errors become `Pair`'s (`src/device.c`).
    private func ask(
        _ agent: AgentRegistry.Agent?, _ method: String, about key: String, capabilities: Set<String>,
        extra: [DBusValue] = []
    ) async throws -> [DBusValue] {
        guard let agent, capabilities.contains(agent.capability),
            let bluez, let agentPath = try? DBusObjectPath(agent.path),
            let devicePath = try? DBusObjectPath(devices[key]!.path)
        else {
            throw BlueZError.authenticationFailed.dbus
        }
        do {
            return try await bluez.call(
                destination: agent.owner, path: agentPath, interface: "org.bluez.Agent1", method: method,
                arguments: [.objectPath(devicePath)] + extra, timeout: .seconds(30))
        } catch let error as DBusError {
            switch error.name.rawValue {
            case "org.bluez.Error.Rejected": throw BlueZError.authenticationRejected.dbus
            case "org.bluez.Error.Canceled": throw BlueZError.authenticationCanceled.dbus
            case DBusErrorName.noReply.rawValue, DBusErrorName.timeout.rawValue, DBusErrorName.timedOut.rawValue:
                throw BlueZError(name: BlueZError.prefix + "AuthenticationTimeout", message: "Authentication Timeout")
                    .dbus
            default: throw BlueZError.authenticationFailed.dbus
            }
        }
    }

    func cancelPairing(_ call: DBusMethodCall) throws {
        let key = try key(forDevicePath: call.path.rawValue)
        do { try devices[key]!.cancelPairing() } catch { throw error.dbus }
        pairingEnded(key)
    }

    func setDeviceProperty(_ key: String, _ name: String, _ value: DBusValue) async throws {
        guard devices[key]?.exported == true else { throw BlueZError.doesNotExist.dbus }
        let value = value.unwrappedVariant
        let effects: [DeviceState.Effect]
        switch name {
        case "Trusted":
            guard let flag = value.asBool else { throw BlueZError.invalidArguments.dbus }
            effects = devices[key]!.setTrusted(flag)
        case "Blocked":
            guard let flag = value.asBool else { throw BlueZError.invalidArguments.dbus }
            effects = devices[key]!.setBlocked(flag)
            if flag, devices[key]!.connected { await linkDown(key, pendingError: nil) }
        case "Alias":
            guard let text = value.asString else { throw BlueZError.invalidArguments.dbus }
            effects = devices[key]!.setAlias(text)
        default:
            // WakeAllowed exists only for devices that can wake the host (HID); none here.
            throw DBusError(name: .invalidArgs, message: "No such property '\(name)'")
        }
        await apply(effects, to: key)
    }
}
