// dbus-bench: the Swift side of the DBus micro-benchmark (see docs/benchmarks.md and
// bench/dbus/run.sh). Receives <count> BlueZ-shaped PropertiesChanged signals through the
// public DBus API (match rule, AsyncStream of decoded DBusValue arguments: `signals(matching:)`,
// or `signalBatches(matching:)` with "batches"), reads every field the way a BLE central does,
// and prints "<label> <count> <seconds> <signals/s> <cpu seconds> <checksum>".
import DBus

#if canImport(Glibc)
    import Glibc
#endif

func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

let arguments = CommandLine.arguments
guard arguments.count >= 3, let count = Int(arguments[2]) else {
    print("usage: dbus-bench <bus address> <count> [each|batches]")
    exit(2)
}
let batched = arguments.count > 3 && arguments[3] == "batches"
let connection = try await DBusConnection(address: arguments[1])
let rule = DBusMatchRule.propertiesChanged(interface: "org.bluez.GattCharacteristic1", pathNamespace: "/org/bluez")
let each = batched ? nil : try await connection.signals(matching: rule)
let batches = batched ? try await connection.signalBatches(matching: rule) : nil
print("READY")
fflush(nil)

/// Reads every field of one signal; false when it does not have the expected shape.
func read(_ signal: DBusSignal, into checksum: inout Int) -> Bool {
    guard signal.arguments.count == 3, let interface = signal.arguments[0].asString,
        let changed = signal.arguments[1].asDictionaryEntries,
        let value = changed.first(where: { $0.key == .string("Value") })?.value.asBytes,
        let invalidated = signal.arguments[2].asStrings
    else { return false }
    checksum &+= Int(interface.utf8.first ?? 0) &+ Int(value.first ?? 0) &+ invalidated.count
    return true
}

/// Consumes off the main actor, as a BLE central's tasks do.
func consume(count: Int) async -> (received: Int, checksum: Int, seconds: Double, cpu: Double) {
    var received = 0
    var checksum = 0
    var start = 0.0
    var cpuStart = 0.0
    func take(_ signal: DBusSignal) -> Bool {
        if received == 0 {
            start = monotonicSeconds()
            cpuStart = cpuSeconds()
        }
        guard read(signal, into: &checksum) else {
            print("unexpected signal shape: \(signal)")
            exit(1)
        }
        received += 1
        return received == count
    }
    if let each {
        for await signal in each where take(signal) { break }
    } else if let batches {
        outer: for await batch in batches {
            for signal in batch where take(signal) { break outer }
        }
    }
    return (received, checksum, monotonicSeconds() - start, cpuSeconds() - cpuStart)
}

let result = await consume(count: count)
print(
    "\(batched ? "swift-batches" : "swift") \(result.received) \(rounded(result.seconds)) \(Int(Double(result.received) / result.seconds)) \(rounded(result.cpu)) \(result.checksum)"
)
connection.close()

func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
