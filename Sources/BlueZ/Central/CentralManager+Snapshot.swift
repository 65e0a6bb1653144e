import DBus

/// How a connect waiting for a shared snapshot is woken: with the snapshot, or to take it itself.
enum SnapshotWake: Sendable {
    /// The snapshot (nil when the call failed).
    case result([DBusObjectPath: DBusValue]?)
    /// The call this connect waited for is due: it issues it (and answers the others waiting for it).
    case issue
}

extension CentralManager {
    /// bluetoothd's whole object tree, from a `GetManagedObjects` sent after this call began (nil when the
    /// call failed). Connects that end together share one call (``SnapshotCoalescer``): after a power cycle
    /// every device reconnects at once, and each asking for the whole tree cost work and memory growing with
    /// the square of the device count.
    func managedObjectsSnapshot() async -> [DBusObjectPath: DBusValue]? {
        switch snapshots.request() {
        case .issue(let number):
            return await takeSnapshot(number)
        case .wait(let number):
            let wake = await withCheckedContinuation { continuation in
                snapshotWaiters[number, default: []].append(continuation)
            }
            switch wake {
            case .result(let tree): return tree
            case .issue: return await takeSnapshot(number)
            }
        }
    }

    /// Sends call `number`, answers everyone waiting for it, and hands the next call (promised to the
    /// connects that asked meanwhile) to the first of them.
    private func takeSnapshot(_ number: UInt64) async -> [DBusObjectPath: DBusValue]? {
        let reply = try? await connection.call(
            destination: BlueZNames.service, path: "/", interface: BlueZNames.objectManager,
            method: "GetManagedObjects", timeout: options.callTimeout)
        let tree = reply?.first?.asObjectPathDictionary
        for waiter in snapshotWaiters.removeValue(forKey: number) ?? [] { waiter.resume(returning: .result(tree)) }
        var next = snapshots.finished(number)
        while let due = next {
            if var waiting = snapshotWaiters[due], !waiting.isEmpty {
                let first = waiting.removeFirst()
                snapshotWaiters[due] = waiting
                first.resume(returning: .issue)
                break
            }
            // Nobody is left to send it (cannot happen: a promise is made with its waiter): done with it,
            // so that later requests do not wait for a call nobody sends.
            next = snapshots.finished(due)
        }
        return tree
    }
}
