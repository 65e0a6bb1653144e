import Bluetooth
import DBus

/// The D-Bus connection BlueZ is reached on, for code that does not speak D-Bus itself (the gateway
/// opens it, hands it to a ``CentralManager``, asks who owns `org.bluez`, and closes it to try
/// again under a new policy).
public final class BlueZBus: Sendable {
    /// Where the bus is.
    public enum Location: Sendable, Equatable {
        /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket).
        case system
        /// The session bus (`DBUS_SESSION_BUS_ADDRESS`).
        case session
        /// A bus address such as `unix:path=/run/dbus/system_bus_socket`.
        case address(String)
    }

    let connection: DBusConnection

    /// Connects to the bus at `location`. Throws when it cannot be reached or refuses the
    /// connection (the error describes which).
    public convenience init(_ location: Location) async throws {
        try await self.init(location, on: nil)
    }

    /// Connects to the bus at `location` on `thread` (a thread of its own when nil): see
    /// ``BlueZBusThread``.
    package init(_ location: Location, on thread: BlueZBusThread?) async throws {
        let loop = thread?.loop
        connection =
            switch location {
            case .system: try await DBusConnection.system(on: loop)
            case .session: try await DBusConnection.session(on: loop)
            case .address(let address): try await DBusConnection(address: address, on: loop)
            }
    }

    /// The unique name of the process that owns `org.bluez` (bluetoothd), or nil while nobody
    /// does or the bus does not answer.
    public func bluezOwner() async -> String? {
        try? await connection.nameOwner(BlueZNames.service)
    }

    /// Closes the connection. A ``CentralManager`` on it stops hearing BlueZ.
    public func close() {
        connection.close()
    }
}

extension CentralManager {
    /// A manager on `bus`; see ``init(connection:options:)``.
    public init(bus: BlueZBus, options: Options = Options()) async throws {
        try await self.init(connection: bus.connection, options: options)
    }
}

extension BlueZBus {
    /// What an error from opening the bus, or a central on it, means for the user.
    public enum Failure: Sendable, Equatable {
        /// The bus refused this user (D-Bus policy), or did not answer it (a policy that drops
        /// the messages shows as no reply).
        case accessDenied
        /// The bus works but nobody owns `org.bluez`: bluetoothd is not running.
        case bluezNotRunning
        /// The bus itself cannot be reached.
        case unreachable
    }

    /// Classifies `error` from ``init(_:)`` or ``CentralManager/init(bus:options:)``.
    public static func failure(of error: any Error) -> Failure {
        if let error = error as? DBusError {
            switch error.name {
            case .accessDenied, .authFailed, .noReply, .timeout, .timedOut: return .accessDenied
            case .serviceUnknown, .nameHasNoOwner: return .bluezNotRunning
            default: return .unreachable
            }
        }
        if let error = error as? BluetoothError, error.code == .unauthorized { return .accessDenied }
        return .unreachable
    }
}
