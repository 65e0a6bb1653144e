// Outbox and publisher benchmarks (not tests). Run through scripts/bench-outbox.sh, release build.
//
//   outbox-bench store [--rows N]
//       rows/s appended through OutboxStore, batched (100 rows per transaction) and unbatched
//       (one row per transaction), synchronous NORMAL and FULL, on a fresh file each.
//   outbox-bench publisher --port PORT [--count N] [--payload BYTES] [--window W] [--rounds R]
//                          [--baseline PATH] [--reserve BYTES]
//       QoS 1 end to end through Outbox + Publisher + MQTTClient to a local mosquitto: readings
//       submitted one by one (one transaction each) until the outbox is empty again (every
//       PUBACK received and every row deleted); and a backlog of N rows drained from a standing
//       start. With --baseline, the mqtt helper's plain C libmosquitto publisher
//       (bench/mqtt/baseline_publisher.c) publishes the same count and payload size at QoS 1 in
//       the same run. --reserve sets the outbox's disk reserve (default 1 MiB), which bounds its
//       WAL to half of it and so sets how often the WAL is checkpointed.
import Foundation
import Logging
import MQTT
import Outbox
import Publisher
import Timekeeping

struct Options {
    var mode = ""
    var rows = 200_000
    var port = 0
    var count = 50_000
    var payload = 64
    var window = 64
    var rounds = 3
    var baseline = ""
    var reserve = OutboxOptions().diskReserve

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        mode = iterator.next() ?? ""
        while let flag = iterator.next() {
            guard let value = iterator.next() else { Self.usage() }
            switch flag {
            case "--rows": rows = Int(value) ?? rows
            case "--port": port = Int(value) ?? port
            case "--count": count = Int(value) ?? count
            case "--payload": payload = Int(value) ?? payload
            case "--window": window = Int(value) ?? window
            case "--rounds": rounds = Int(value) ?? rounds
            case "--baseline": baseline = value
            case "--reserve": reserve = Int(value) ?? reserve
            default: Self.usage()
            }
        }
        if mode != "store" && (mode != "publisher" || port == 0) { Self.usage() }
    }

    static func usage() -> Never {
        FileHandle.standardError.write(
            Data(
                """
                usage: outbox-bench store [--rows N]
                       outbox-bench publisher --port PORT [--count N] [--payload B] [--window W] [--rounds R] [--baseline PATH] [--reserve BYTES]

                """.utf8))
        exit(64)
    }
}

let clock = ContinuousClock()

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func temporaryDatabase() throws -> (URL, String) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return (directory, directory.appendingPathComponent("bench.sqlite").path)
}

func entry(_ index: Int, payload: Int) -> OutboxEntry {
    var bytes = Array(#"{"device":"dev\#(index % 20)","seq":\#(index),"ts":"2026-11-30T00:00:00.000Z"}"#.utf8)
    if bytes.count < payload { bytes += [UInt8](repeating: 0x20, count: payload - bytes.count) }
    return OutboxEntry(
        topic: "bench/dev\(index % 20)", payload: Array(bytes.prefix(max(payload, 1))), sampleTime: SystemClock().date,
        stream: "dev\(index % 20)")
}

// MARK: - Store

func storeRate(synchronous: OutboxSynchronousMode, batch: Int, rows: Int) async throws -> Double {
    let (directory, path) = try temporaryDatabase()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try await OutboxStore(path: path, options: OutboxOptions(synchronous: synchronous))
    let entries = (0..<rows).map { entry($0, payload: 64) }
    let start = clock.now
    var index = 0
    while index < rows {
        let end = min(index + batch, rows)
        if batch == 1 {
            try await store.append(entries[index])
        } else {
            try await store.append(Array(entries[index..<end]))
        }
        index = end
    }
    let elapsed = clock.now - start
    let depth = try await store.stats().depth
    precondition(depth == rows, "stored \(depth) of \(rows)")
    return Double(rows) / elapsed.inSeconds
}

/// The same inserts straight through the SQLite wrapper on the calling thread (no actor, no caps
/// bookkeeping): what the store costs on top of SQLite itself.
func rawRate(synchronous: OutboxSynchronousMode, batch: Int, rows: Int) throws -> Double {
    let (directory, path) = try temporaryDatabase()
    defer { try? FileManager.default.removeItem(at: directory) }
    let connection = try SQLiteConnection(path: path)
    _ = try connection.texts("PRAGMA journal_mode = WAL")
    try connection.execute("PRAGMA synchronous = \(synchronous.rawValue.uppercased())")
    try connection.execute(
        """
        CREATE TABLE outbox (id INTEGER PRIMARY KEY, stream TEXT NOT NULL, topic TEXT NOT NULL,
            payload BLOB NOT NULL, qos INTEGER NOT NULL, retain INTEGER NOT NULL, sample_time INTEGER NOT NULL,
            enqueued_at INTEGER NOT NULL, size INTEGER NOT NULL)
        """)
    let insert = try connection.prepare(
        "INSERT INTO outbox (stream, topic, payload, qos, retain, sample_time, enqueued_at, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    )
    let entries = (0..<rows).map { entry($0, payload: 64) }
    let start = clock.now
    var index = 0
    while index < rows {
        let end = min(index + batch, rows)
        try connection.transaction {
            for item in entries[index..<end] {
                try insert.run([
                    .text(item.stream), .text(item.topic), .blob(item.payload), 1, 0, .integer(Int64(index)),
                    .integer(Int64(index)), .integer(Int64(item.size)),
                ])
            }
        }
        index = end
    }
    return Double(rows) / (clock.now - start).inSeconds
}

func runStore(_ options: Options) async throws {
    print("outbox rows/s (64-byte payloads, fresh WAL file each, median of 3)")
    print("synchronous  rows/txn  rows        OutboxStore  raw SQLite wrapper, same thread")
    for synchronous in [OutboxSynchronousMode.normal, .full] {
        for batch in [100, 1] {
            // FULL syncs every commit: fewer rows keep the unbatched run short.
            let rows = batch == 1 ? (synchronous == .full ? options.rows / 100 : options.rows / 10) : options.rows
            var rates: [Double] = []
            var raw: [Double] = []
            for _ in 0..<3 {
                rates.append(try await storeRate(synchronous: synchronous, batch: batch, rows: rows))
                raw.append(try rawRate(synchronous: synchronous, batch: batch, rows: rows))
            }
            let name = synchronous.rawValue.uppercased().padding(toLength: 12, withPad: " ", startingAt: 0)
            print(name + String(format: " %-9d %-11d %-12.0f %.0f", batch, rows, median(rates), median(raw)))
        }
    }
}

// MARK: - Publisher

func waitUntilEmpty(_ store: OutboxStore) async throws {
    // The benchmark's end condition, read from outside the publisher; 2 ms is the measurement's resolution.
    while try await store.stats().depth > 0 { try await Task.sleep(for: .milliseconds(2)) }
}

func publisherRates(_ options: Options, round: Int) async throws -> (live: Double, concurrent: Double, drain: Double) {
    let (directory, path) = try temporaryDatabase()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try await OutboxStore(path: path, options: OutboxOptions(diskReserve: options.reserve))
    let client = MQTTClient(
        configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:\(options.port)", clientID: "outbox-bench-\(round)")
    )
    try await client.connect()
    let publisher = Publisher(store: store, client: client, options: PublisherOptions(window: options.window))
    await publisher.start()
    let entries = (0..<options.count).map { entry($0, payload: options.payload) }

    // Live, one producer: one submit per reading, each awaited.
    var start = clock.now
    for item in entries { try await publisher.submit(item) }
    try await waitUntilEmpty(store)
    let live = Double(options.count) / (clock.now - start).inSeconds

    // Live, 20 devices submitting concurrently (group commit shares transactions).
    start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for device in 0..<20 {
            group.addTask {
                for index in stride(from: device, to: entries.count, by: 20) {
                    try await publisher.submit(entries[index])
                }
            }
        }
        try await group.waitForAll()
    }
    try await waitUntilEmpty(store)
    let concurrent = Double(options.count) / (clock.now - start).inSeconds

    // Backlog: rows already stored, publisher started from standing.
    await publisher.stop(drainTimeout: .zero)
    for chunk in stride(from: 0, to: entries.count, by: 100) {
        try await store.append(Array(entries[chunk..<min(chunk + 100, entries.count)]))
    }
    let drainer = Publisher(store: store, client: client, options: PublisherOptions(window: options.window))
    start = clock.now
    await drainer.start()
    try await waitUntilEmpty(store)
    let drain = Double(options.count) / (clock.now - start).inSeconds
    await drainer.stop()
    await client.disconnect()
    return (live, concurrent, drain)
}

func baselineRate(_ options: Options) throws -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: options.baseline)
    process.arguments = ["\(options.port)", "1", "\(options.count)", "\(options.payload)"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    process.waitUntilExit()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    guard process.terminationStatus == 0,
        let number = text.split(whereSeparator: { !"0123456789.".contains($0) }).compactMap({ Double($0) }).first
    else { throw CocoaError(.featureUnsupported, userInfo: [NSDebugDescriptionErrorKey: "baseline failed: \(text)"]) }
    return number
}

func runPublisher(_ options: Options) async throws {
    print(
        "QoS 1 end to end, \(options.count) readings of \(options.payload) bytes, window \(options.window), "
            + "local mosquitto")
    print("round   C baseline  live 1 producer  ratio  live 20 devices  ratio  backlog drain  ratio   (msg/s)")
    var rows: [[Double]] = []
    func line(_ label: String, _ values: [Double]) -> String {
        let baseline = values[0]
        var text = label.padding(toLength: 7, withPad: " ", startingAt: 0) + String(format: " %11.0f", baseline)
        for (value, width) in zip(values.dropFirst(), [15, 15, 13]) {
            // Without a baseline (bench/mqtt/baseline_publisher.c absent) there is no ratio.
            let ratio = baseline > 0 ? String(format: "%5.2f", value / baseline) : "    -"
            text += String(format: "  %\(width).0f  ", value) + ratio
        }
        return text
    }
    for round in 1...options.rounds {
        let baseline = options.baseline.isEmpty ? 0 : try baselineRate(options)
        let (live, concurrent, drain) = try await publisherRates(options, round: round)
        rows.append([baseline, live, concurrent, drain])
        print(line("\(round)", rows.last!))
    }
    print(line("median", (0..<4).map { column in median(rows.map { $0[column] }) }))
}

let options = Options(CommandLine.arguments)
LogConfiguration.shared.threshold = .warning
do {
    if options.mode == "store" {
        try await runStore(options)
    } else {
        try await runPublisher(options)
    }
} catch {
    FileHandle.standardError.write(Data("outbox-bench: \(error)\n".utf8))
    exit(1)
}
