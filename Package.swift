// swift-tools-version:6.0
// BLEBridge: a Bluetooth Low Energy to MQTT gateway for Linux.
// One target per job; see docs/architecture.md for the module map.
import PackageDescription

let package = Package(
    name: "BLEBridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "blebridge", targets: ["blebridge"]),
        .library(name: "Bluetooth", targets: ["Bluetooth"]),
        .library(name: "BlueZ", targets: ["BlueZ"]),
        .library(name: "DBus", targets: ["DBus"]),
        // The parsers of outside input, for the libFuzzer harnesses in Fuzz/ (`make fuzz`).
        .library(name: "Decoders", targets: ["Decoders"]),
        .library(name: "ByteLayouts", targets: ["ByteLayouts"]),
        .library(name: "JSON", targets: ["JSON"]),
        .library(name: "Configuration", targets: ["Configuration"]),
        .library(name: "Gateway", targets: ["Gateway"]),
        .library(name: "BlueZSimulator", targets: ["BlueZSimulator"]),
    ],
    targets: [
        // System C libraries (Debian -dev packages). Only the wrapper module named
        // beside each may import it.
        .systemLibrary(
            name: "CDBus", pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]),  // imported by DBus only
        .systemLibrary(
            name: "CMosquitto", pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]),  // imported by MQTT only
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),  // imported by Outbox only
        // Imported by Decoders (AES-CCM of BTHome/MiBeacon, AES-CTR of Victron) and MQTT (TLS verify reasons).
        .systemLibrary(
            name: "CCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        // <sys/epoll.h>, <sys/eventfd.h> (libc); imported by EventLoop (and BlueZ's NotifySocketPoller).
        .systemLibrary(name: "CEpoll"),
        .systemLibrary(name: "CMalloc"),  // <malloc.h> (glibc's malloc_trim, mallopt); imported by ProcessMemory only

        // Small leaf modules.
        .target(name: "Logging"),
        .target(name: "JSON"),
        .target(name: "Bluetooth", dependencies: ["Timekeeping"]),
        .target(name: "HomeAssistantTables"),  // Home Assistant's device/state classes and units, pinned to a release
        // The user-defined layout description, shared by Configuration and Decoders.
        .target(name: "ByteLayouts", dependencies: ["HomeAssistantTables", "JSON"]),
        .target(name: "Configuration", dependencies: ["Bluetooth", "ByteLayouts", "JSON", "Timekeeping"]),
        // sd_notify: READY, WATCHDOG, STOPPING for Type=notify.
        .target(name: "SystemdNotify", dependencies: ["Timekeeping"]),
        // C: Swift's global executor on fixed threads (the runtime's hooks); imported by TaskPool only.
        .target(name: "CTaskPool"),
        // sigaction with an async-signal-safe handler that writes to a pipe; imported by Gateway only.
        .target(name: "CSignalPipe"),
        .target(name: "TaskPool", dependencies: ["CTaskPool"]),  // installed first thing in blebridge's main
        // The injected clock, durations, deadlines and timestamps.
        .target(name: "Timekeeping", dependencies: ["TaskPool"]),
        // One task group per component owning its tasks (TaskScope), with cancellable children.
        .target(name: "TaskScope", dependencies: ["Timekeeping"]),
        // One thread with epoll, an eventfd wake-up, timers on an injected clock; a SerialExecutor.
        .target(name: "EventLoop", dependencies: ["CEpoll", "Logging", "Timekeeping"]),

        // Wrappers of C libraries.
        .target(name: "DBus", dependencies: ["CDBus", "EventLoop", "Logging", "Timekeeping"]),
        .target(
            name: "MQTT", dependencies: ["CMosquitto", "CCrypto", "EventLoop", "Logging", "TaskScope", "Timekeeping"]),
        .target(name: "Outbox", dependencies: ["CSQLite", "EventLoop", "Logging", "Timekeeping"]),
        .target(
            name: "Publisher", dependencies: ["Outbox", "EventLoop", "MQTT", "Logging", "TaskScope", "Timekeeping"]),
        .target(name: "ProcessMemory", dependencies: ["CMalloc"]),  // malloc_trim after a table shrank; one arena

        // BLE.
        .target(
            name: "BlueZ", dependencies: ["DBus", "Bluetooth", "EventLoop", "Logging", "TaskScope", "Timekeeping"]),
        .target(
            name: "BlueZSimulator", dependencies: ["DBus", "Bluetooth", "JSON", "Logging", "Timekeeping"]),
        .target(
            name: "Decoders",
            dependencies: ["Bluetooth", "ByteLayouts", "CCrypto", "JSON", "HomeAssistantTables", "Timekeeping"]),

        // The product.
        .target(
            name: "Gateway",
            dependencies: [
                "Configuration", "BlueZ", "Decoders", "ByteLayouts", "JSON", "MQTT", "Outbox", "Publisher", "Logging",
                "Bluetooth", "CSignalPipe", "HomeAssistantTables", "ProcessMemory", "TaskScope", "Timekeeping",
            ]),
        .executableTarget(
            name: "blebridge",
            dependencies: [
                "Gateway", "Configuration", "BlueZSimulator", "BlueZ", "Decoders", "ByteLayouts", "Logging",
                "Bluetooth", "JSON", "SystemdNotify", "MQTT", "ProcessMemory", "TaskPool", "TaskScope", "Timekeeping",
            ]),

        // Micro-benchmarks (not tests; release builds): bench/dbus/run.sh, bench/mqtt/run.sh, docs/benchmarks.md.
        .executableTarget(name: "dbus-bench", dependencies: ["DBus"], path: "Sources/Benchmarks/dbus-bench"),
        .executableTarget(
            name: "mqtt-bench", dependencies: ["MQTT", "Timekeeping"], path: "Sources/Benchmarks/mqtt-bench"),
        .executableTarget(name: "notify-bench", dependencies: ["BlueZ"], path: "Sources/Benchmarks/notify-bench"),

        // Tools: the publisher's crash-test subject and the outbox/publisher benchmark.
        .executableTarget(
            name: "outbox-probe", dependencies: ["Outbox", "Publisher", "MQTT", "Logging", "Timekeeping"],
            path: "Sources/Tools/outbox-probe"),
        .executableTarget(
            name: "outbox-bench", dependencies: ["Outbox", "Publisher", "MQTT", "Logging", "Timekeeping"],
            path: "Sources/Benchmarks/outbox-bench"),

        // The central library's conformance scenario and its peripheral (real-BlueZ VM tier).
        .executableTarget(
            name: "ble-conformance", dependencies: ["BlueZ", "Bluetooth", "DBus", "Logging", "Timekeeping"],
            path: "Sources/Tools/ble-conformance"),

        // Fixtures shared by the test targets: private dbus-daemon, mosquitto on a
        // free loopback port, temporary directories, subprocesses.
        .target(name: "TestSupport", dependencies: ["DBus", "Logging", "Timekeeping"], path: "Tests/TestSupport"),

        .testTarget(name: "LoggingTests", dependencies: ["Logging"]),
        .testTarget(name: "TaskScopeTests", dependencies: ["TaskScope", "TestSupport", "Timekeeping"]),
        .testTarget(name: "TaskPoolTests", dependencies: ["TaskPool", "TestSupport", "Timekeeping"]),
        .testTarget(name: "ProcessMemoryTests", dependencies: ["ProcessMemory", "TestSupport"]),
        .testTarget(name: "BluetoothTests", dependencies: ["Bluetooth"]),
        .testTarget(
            name: "ConfigurationTests", dependencies: ["Configuration", "ByteLayouts", "Bluetooth", "TestSupport"]),
        .testTarget(name: "SystemdNotifyTests", dependencies: ["SystemdNotify", "TestSupport"]),
        .testTarget(name: "DeployTests", dependencies: ["TestSupport"]),  // deploy/: unit file, .deb
        .testTarget(name: "DBusTests", dependencies: ["DBus", "EventLoop", "TestSupport"]),
        .testTarget(name: "MQTTTests", dependencies: ["EventLoop", "MQTT", "TestSupport", "Timekeeping"]),
        .testTarget(
            name: "OutboxTests", dependencies: ["Outbox", "TestSupport", "Logging", "Timekeeping", "EventLoop"]),
        .testTarget(
            name: "PublisherTests",
            dependencies: ["Publisher", "Outbox", "MQTT", "TestSupport", "Logging", "Timekeeping", "EventLoop"]),
        .testTarget(
            name: "BlueZTests",
            dependencies: ["BlueZ", "BlueZSimulator", "Bluetooth", "DBus", "TaskScope", "TestSupport", "Timekeeping"]),
        .testTarget(
            name: "BlueZSimulatorTests",
            dependencies: ["BlueZSimulator", "Bluetooth", "DBus", "TestSupport", "Timekeeping"],
            exclude: ["Clients", "Reference", "Fidelity/drive_probe.py"]),
        .testTarget(name: "DecodersTests", dependencies: ["Decoders", "ByteLayouts", "Bluetooth", "JSON"]),
        // Decoders against the ecosystem's reference parsers (scripts/differential/oracle.py).
        .testTarget(name: "DifferentialTests", dependencies: ["Decoders", "Bluetooth", "TestSupport"]),
        .testTarget(
            name: "GatewayTests",
            // Every module the tests import, directly: a module imported only through another's
            // dependencies is not rebuilt when it changes (a stale GatewayTests built against the old
            // OutboxOptions layout crashed with a bad pointer in the outbox thread).
            dependencies: [
                "Gateway", "JSON", "Configuration", "ByteLayouts", "BlueZ", "BlueZSimulator", "TestSupport", "Outbox",
                "Publisher", "MQTT", "Decoders", "Bluetooth", "DBus", "HomeAssistantTables", "Timekeeping",
            ]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "TimekeepingTests", dependencies: ["Timekeeping", "TestSupport"]),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop", "Timekeeping"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TestSupport", "MQTT", "BlueZSimulator", "Gateway", "Outbox", "Configuration", "DBus", "Timekeeping",
                "Bluetooth", "BlueZ", "EventLoop",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
