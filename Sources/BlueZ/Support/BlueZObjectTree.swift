import DBus

/// BlueZ's objects as a ``CentralManager`` last learnt them: the one copy the manager and each of
/// its ``Peripheral``s read (issue 20: the peripherals used to keep copies of their device's
/// properties and GATT objects, updated signal by signal beside the manager's).
///
/// Pinned, with the manager and its peripherals, to the D-Bus connection's thread, so each of them
/// reads it with a plain call (``read(_:)``) in bus order; only the manager changes it
/// (``update(_:)``), as bluetoothd's signals and replies are handled.
actor BlueZObjectTree {
    private nonisolated let connection: DBusConnection
    nonisolated var unownedExecutor: UnownedSerialExecutor { connection.serialExecutor }
    private var objects = ManagedObjects()

    init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Reads the tree; only on the connection's thread (the manager's and its peripherals' executor).
    nonisolated func read<Value: Sendable>(_ body: @Sendable (ManagedObjects) -> Value) -> Value {
        assumeIsolated { body($0.objects) }
    }

    /// Changes the tree in place; only on the connection's thread.
    nonisolated func update(_ body: @Sendable (inout ManagedObjects) -> Void) {
        assumeIsolated { body(&$0.objects) }
    }
}
