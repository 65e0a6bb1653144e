// mqtt-bench: publish throughput of MQTTClient against a local mosquitto, compared in the same run
// with a plain C libmosquitto publisher (bench/mqtt/baseline_publisher.c). Not a test; run it
// through bench/mqtt/run.sh (release build, broker with `max_queued_messages 0`).
//
//   mqtt-bench --port PORT --baseline PATH [--count0 N] [--count1 N] [--payload BYTES] [--rounds R] [--window W]
//
// Both sides publish COUNT0 (QoS 0) or COUNT1 (QoS 1) messages with MQTT 5, then a QoS 1 fence, and stop the clock when the
// fence (QoS 0) or every message (QoS 1) is acknowledged. QoS 1 from Swift keeps WINDOW publishes
// in flight (the outbox publisher's window); the C side publishes without waiting, so COUNT1 must
// stay below 65,535 (libmosquitto's message ids would repeat inside its own queue).
import Foundation
import MQTT
import Timekeeping

struct Options {
    var port = 1883
    var baseline = ""
    var count0 = 200_000
    var count1 = 50_000
    var payload = 64
    var rounds = 3
    var window = 64

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            guard let value = iterator.next() else { Self.usage() }
            switch flag {
            case "--port": port = Int(value) ?? port
            case "--baseline": baseline = value
            case "--count0": count0 = Int(value) ?? count0
            case "--count1": count1 = min(Int(value) ?? count1, 65_000)
            case "--payload": payload = Int(value) ?? payload
            case "--rounds": rounds = Int(value) ?? rounds
            case "--window": window = Int(value) ?? window
            default: Self.usage()
            }
        }
        if baseline.isEmpty { Self.usage() }
    }

    static func usage() -> Never {
        FileHandle.standardError.write(
            Data(
                "usage: mqtt-bench --port PORT --baseline PATH [--count0 N] [--count1 N] [--payload B] [--rounds R] [--window W]\n"
                    .utf8))
        exit(64)
    }
}

extension Options {
    func count(_ qos: MQTTQoS) -> Int { qos == .atMostOnce ? count0 : count1 }
}

/// Throughput (messages/s) and CPU time per message (µs, user + system, all threads).
struct Measurement {
    var rate: Double
    var cpuMicroseconds: Double
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

func swiftThroughput(_ options: Options, qos: MQTTQoS) async throws -> Measurement {
    let client = MQTTClient(
        configuration: try MQTTConfiguration(
            url: "mqtt://127.0.0.1:\(options.port)", clientID: "", protocolVersion: .v5))
    try await client.connect()
    let payload = [UInt8](repeating: UInt8(ascii: "x"), count: options.payload)
    let message = MQTTMessage(topic: "bench/swift", payload: payload, qos: qos)
    let clock = ContinuousClock()
    let start = clock.now
    let cpuStart = cpuSeconds()
    if qos == .atMostOnce {
        for _ in 0..<options.count(qos) { try await client.publish(message) }
    } else {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<options.count(qos) {
                if index >= options.window { try await group.next() }
                group.addTask { try await client.publish(message) }
            }
            try await group.waitForAll()
        }
    }
    try await client.publish(MQTTMessage(topic: "bench/swift", payload: payload, qos: .atLeastOnce))  // the fence
    let elapsed = clock.now - start
    let cpu = cpuSeconds() - cpuStart
    await client.disconnect()
    let count = Double(options.count(qos))
    let seconds = elapsed.inSeconds
    return Measurement(rate: count / seconds, cpuMicroseconds: cpu * 1e6 / count)
}

func baselineThroughput(_ options: Options, qos: MQTTQoS) throws -> Measurement {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: options.baseline)
    process.arguments = ["\(options.port)", "\(qos.rawValue)", "\(options.count(qos))", "\(options.payload)"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let fields = String(decoding: data, as: UTF8.self).split(separator: " ").compactMap {
        Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    guard process.terminationStatus == 0, fields.count == 2 else {
        throw NSError(domain: "mqtt-bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "baseline publisher failed"])
    }
    return Measurement(rate: fields[0], cpuMicroseconds: fields[1])
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// Writes a line at once (a pipe would buffer `print` until exit).
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let options = Options(CommandLine.arguments)
report(
    "mqtt-bench: \(options.count0) (QoS 0) / \(options.count1) (QoS 1) messages of \(options.payload) bytes, \(options.rounds) rounds, MQTT 5, port \(options.port)"
)
report("qos  round    C msg/s  Swift msg/s  ratio   C µs/msg  Swift µs/msg  CPU ratio")
func line(_ label: String, _ c: Measurement, _ swift: Measurement, qos: MQTTQoS) -> String {
    String(
        format: "%-4d %-6@ %9.0f  %11.0f  %5.2f   %8.2f  %12.2f  %9.2f", qos.rawValue, label, c.rate, swift.rate,
        swift.rate / c.rate, c.cpuMicroseconds, swift.cpuMicroseconds, swift.cpuMicroseconds / c.cpuMicroseconds)
}
for qos in [MQTTQoS.atMostOnce, .atLeastOnce] {
    var baseline: [Measurement] = []
    var swift: [Measurement] = []
    for round in 1...options.rounds {
        // Alternate the order so that neither side always runs on a warmer broker.
        if round % 2 == 1 {
            baseline.append(try baselineThroughput(options, qos: qos))
            swift.append(try await swiftThroughput(options, qos: qos))
        } else {
            swift.append(try await swiftThroughput(options, qos: qos))
            baseline.append(try baselineThroughput(options, qos: qos))
        }
        report(line("\(round)", baseline.last!, swift.last!, qos: qos))
    }
    let medianC = Measurement(
        rate: median(baseline.map(\.rate)), cpuMicroseconds: median(baseline.map(\.cpuMicroseconds)))
    let medianSwift = Measurement(
        rate: median(swift.map(\.rate)), cpuMicroseconds: median(swift.map(\.cpuMicroseconds)))
    report(line("median", medianC, medianSwift, qos: qos))
}
