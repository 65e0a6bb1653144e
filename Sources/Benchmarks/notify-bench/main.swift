// notify-bench: the AcquireNotify read path alone (`NotifySocketPoller`), without BlueZ, D-Bus or
// the gateway. <sockets> SOCK_SEQPACKET socket pairs (the kind bluetoothd hands out) are read by
// the poller; this process's main thread plays BlueZ and writes <rate> notifications per second,
// round-robin over the sockets, for <seconds>, each stamped with its send time. Prints
// "notify-bench <messages> <notify-thread µs/msg> <p50 µs> <p99 µs> <max µs> <process cpu s>":
// the poller thread's own CPU time (`/proc/self/task/<tid>/schedstat`) per message, and the
// latency from the write to the `onValue` call. Time the whole process from outside as well.
import BlueZ
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// CPU nanoseconds of this process's thread named `name` (the first field of its schedstat; the
/// kernel keeps 15 bytes of a name).
func threadCPUNanoseconds(named name: String) -> UInt64? {
    let name = String(decoding: name.utf8.prefix(15), as: UTF8.self)
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    for task in tasks {
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        guard comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
            let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8),
            let first = stat.split(separator: " ").first
        else { continue }
        return UInt64(first)
    }
    return nil
}

let arguments = CommandLine.arguments.dropFirst().map { Int($0) }
guard arguments.count <= 4, arguments.allSatisfy({ $0 != nil && $0! > 0 }) else {
    print("usage: notify-bench [sockets (50)] [rate/s (1000)] [seconds (5)] [payload bytes ≥ 8 (20)]")
    exit(2)
}
let sockets = arguments.count > 0 ? arguments[0]! : 50
let rate = arguments.count > 1 ? arguments[1]! : 1000
let seconds = arguments.count > 2 ? arguments[2]! : 5
let size = max(8, arguments.count > 3 ? arguments[3]! : 20)
let total = rate * seconds
let threadName = "blebridge.notify"

/// Latencies in nanoseconds, in arrival order; `done` is signalled at the last one.
let latencies = Mutex<[UInt64]>(
    {
        var array: [UInt64] = []
        array.reserveCapacity(total)
        return array
    }())
let done = DispatchSemaphore(value: 0)

let poller = NotifySocketPoller(threadName: threadName)
var peers: [Int32] = []
var registrations: [NotifySocketPoller.Registration] = []
for _ in 0..<sockets {
    var fds: [Int32] = [-1, -1]
    let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
        print("notify-bench: socketpair failed: errno \(errno)")
        exit(1)
    }
    peers.append(fds[1])
    registrations.append(
        poller.add(
            fd: fds[0],
            onValue: { value in
                let now = monotonicNanoseconds()
                let sent = value.loadUnaligned(as: UInt64.self)
                let count = latencies.withLock { array -> Int in
                    array.append(now &- sent)
                    return array.count
                }
                if count == total { done.signal() }
            },
            onEnd: {
                print("notify-bench: a socket ended early")
                exit(1)
            }))
}

var packet = [UInt8](repeating: 0x5A, count: size)
let interval = 1_000_000_000 / UInt64(rate)
let start = monotonicNanoseconds() + 100_000_000  // 0.1 s for the poller to watch every socket
var deadline = timespec()
var cpuStart: UInt64 = 0
for index in 0..<total {
    let due = start + UInt64(index) * interval
    deadline.tv_sec = Int(due / 1_000_000_000)
    deadline.tv_nsec = Int(due % 1_000_000_000)
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
    if index == 0 { cpuStart = threadCPUNanoseconds(named: threadName) ?? 0 }
    var stamp = monotonicNanoseconds()
    withUnsafeBytes(of: &stamp) { stampBytes in
        for byte in 0..<8 { packet[byte] = stampBytes[byte] }
    }
    let peer = peers[index % sockets]
    guard packet.withUnsafeBytes({ write(peer, $0.baseAddress, size) }) == size else {
        print("notify-bench: write failed: errno \(errno)")
        exit(1)
    }
}
guard done.wait(timeout: .now() + 10) == .success else {
    print("notify-bench: \(latencies.withLock { $0.count }) of \(total) notifications arrived")
    exit(1)
}
let cpu = (threadCPUNanoseconds(named: threadName) ?? 0) &- cpuStart
let sorted = latencies.withLock { $0 }.sorted()
func percentile(_ fraction: Double) -> Double {
    Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) / 1000
}
var usage = rusage()
getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
let processCPU =
    Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
print(
    "notify-bench", total, String(format: "%.2f", Double(cpu) / 1000 / Double(total)),
    String(format: "%.1f", percentile(0.5)), String(format: "%.1f", percentile(0.99)),
    String(format: "%.1f", Double(sorted.last ?? 0) / 1000), String(format: "%.3f", processCPU))
for registration in registrations { registration.stop() }
poller.shutdown()
