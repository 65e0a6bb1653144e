import Foundation
import Logging
import MQTT
import Outbox
import Publisher
import Timekeeping

// A small process for the publisher's crash-safety test: it submits numbered readings through
// the real Outbox + Publisher + MQTT client at a steady rate and prints `accepted <n>` (one
// unbuffered write each) only after the outbox committed reading n. A test SIGKILLs it and
// starts it again on the same database; every reading printed as accepted must then arrive.
// With --spill-after MS the publisher runs in memory-first mode: readings are offered (not
// committed) and printed as `offered <n> <ms since the first>`; a SIGKILL may then lose those of
// the last MS milliseconds the broker had not acknowledged (the loss-bound test times them).
//
// outbox-probe --db PATH --url mqtt://127.0.0.1:PORT --client-id ID --topic PREFIX
//              [--stream NAME] [--start N] [--count N] [--rate PER_SECOND] [--spill-after MS]
// With --count 0 it only drains what the outbox holds, then keeps running until killed.

func option(_ name: String, _ fallback: String? = nil) -> String {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: name), index + 1 < arguments.count { return arguments[index + 1] }
    if let fallback { return fallback }
    FileHandle.standardError.write(Data("outbox-probe: missing \(name)\n".utf8))
    exit(64)
}

func say(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    bytes.withUnsafeMutableBytes { _ = write(1, $0.baseAddress, $0.count) }
}

let database = option("--db")
let url = option("--url")
let clientID = option("--client-id")
let topic = option("--topic")
let stream = option("--stream", "probe")
let start = Int(option("--start", "0")) ?? 0
let count = Int(option("--count", "0")) ?? 0
let rate = Double(option("--rate", "500")) ?? 500
let spillAfter = Int(option("--spill-after", "0")) ?? 0
let mode: PublisherOptions.Mode = spillAfter > 0 ? .memoryFirst(spillAfter: .milliseconds(spillAfter)) : .durable

do {
    let store = try await OutboxStore(path: database)
    let configuration = try MQTTConfiguration(
        url: url, clientID: clientID, cleanSession: false, minimumReconnectDelay: .milliseconds(50),
        maximumReconnectDelay: .milliseconds(500))
    let client = MQTTClient(configuration: configuration)
    try await client.start()
    let publisher = Publisher(
        store: store, client: client, options: PublisherOptions(sampleTimeProperty: "sample_time", mode: mode))
    await publisher.start()
    say("ready depth=\(try await store.stats().depth)")

    let clock = SystemClock()
    let begin = clock.now
    for index in start..<(start + count) {
        let time = clock.date
        let payload = #"{"seq":\#(index),"ts":"\#(Timestamp.iso8601(time))"}"#
        let entry = OutboxEntry(
            topic: "\(topic)/\(stream)", payload: Array(payload.utf8), sampleTime: time, stream: stream)
        if spillAfter > 0 {
            publisher.offer([entry])
            // With the time it was offered (ms since the first), for the loss-bound test's window.
            say("offered \(index) \(Int((clock.now - begin).inMilliseconds))")
        } else {
            try await publisher.submit(entry)
            say("accepted \(index)")
        }
        let due = begin + .seconds(Double(index - start + 1) / rate)
        // Real delay: the probe's submission rate.
        if due > clock.now { try await Task.sleep(until: due, clock: clock) }
    }
    say("submitted")
    while true {
        // Woken when the window drains (or after a second, to report again while disconnected).
        await publisher.waitUntilDrained(timeout: .seconds(1))
        let stats = try await publisher.stats()
        if stats.depth == 0 && stats.inFlight == 0 && stats.inMemory == 0 {
            say("drained published=\(stats.published)")
            break
        }
    }
    // Real delay: the probe idles until it is killed (the test measures what survives).
    while true { try await Task.sleep(for: .seconds(3600)) }
} catch {
    FileHandle.standardError.write(Data("outbox-probe: \(error)\n".utf8))
    exit(1)
}
