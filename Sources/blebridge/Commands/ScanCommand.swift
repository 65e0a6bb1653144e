import BlueZ
import Bluetooth
import Decoders
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `blebridge scan`: nearby BLE devices, live. On a terminal the table refreshes in place; otherwise each
/// discovery is printed as one line.
struct ScanCommand: CLICommand {
    static let name = "scan"
    static let summary = "Show nearby BLE devices (live on a terminal, one line per sighting otherwise)"
    static let usage = """
        Usage: blebridge scan [--bus ADDRESS] [--adapter NAME] [--service UUID[,UUID…]] [--rssi DBM]
                              [--duplicates] [--duration SECONDS] [--plain]

        Scans through BlueZ and shows each device's address, RSSI, name, advertised services and the
        decoded advertisement where the format is known (BTHome, iBeacon, Eddystone, …; raw hex otherwise).

          --bus ADDRESS          the D-Bus bus of BlueZ (default: the system bus, DBUS_SYSTEM_BUS_ADDRESS)
          --adapter NAME         the adapter (default hci0)
          --service UUIDS        only devices advertising one of these services (16-bit or 128-bit, commas)
          --rssi DBM             only devices at least this strong, e.g. -80
          --duplicates           report every advertisement, not only changes
          --duration SECONDS     stop after this long (default: until Ctrl-C)
          --plain                one line per sighting even on a terminal

        Exit status: 0 when stopped, 69 BlueZ or the adapter unavailable, 64 usage error.
        """

    static func run(_ arguments: inout ArgumentList) async throws -> ExitStatus {
        let busAddress = try arguments.option("bus")
        let adapter = try arguments.option("adapter") ?? "hci0"
        let services =
            try arguments.option(
                "service", expected: "UUIDs such as 180d or 6e400001-b5a3-f393-e0a9-e50e24dcca9e, separated by commas",
                parse: { text -> [BluetoothUUID]? in
                    let uuids = text.split(separator: ",").map { BluetoothUUID(String($0)) }
                    return uuids.contains(nil) ? nil : uuids.compactMap { $0 }
                }) ?? [BluetoothUUID]()
        let rssi = try arguments.option("rssi", expected: "a whole number of dBm such as -80", parse: { Int($0) })
        let duplicates = arguments.flag("duplicates")
        let duration = try arguments.option(
            "duration", expected: "a positive number of seconds", parse: { Double($0).flatMap { $0 > 0 ? $0 : nil } })
        let plain = arguments.flag("plain")
        try arguments.finish()

        let manager: CentralManager
        do {
            manager = try await CentralManager.connect(busAddress: busAddress, options: .init(adapter: adapter))
        } catch {
            throw CommandLineError.failure(
                "cannot reach the D-Bus bus (\(error)); is dbus running, or pass --bus ADDRESS", status: .unavailable)
        }
        do {
            // Only a state that may still change is worth waiting for.
            if [.unknown, .resetting].contains(await manager.state) {
                try await manager.waitUntilPoweredOn(timeout: .seconds(5))
            }
            if let error = await manager.state.operationError { throw error }
        } catch {
            let state = await manager.state
            throw CommandLineError.failure(
                "Bluetooth is \(state) on \(adapter) (\(error)); start bluetoothd, check `rfkill`, or use "
                    + "`blebridge simulate`", status: .unavailable)
        }
        let stream: AsyncStream<Discovery>
        do {
            stream = try await manager.scan(services: services, allowDuplicates: duplicates, rssiThreshold: rssi)
        } catch {
            throw CommandLineError.failure("cannot scan: \(error)", status: .unavailable)
        }
        let live = !plain && isatty(STDOUT_FILENO) == 1
        let deadline = duration.map { ContinuousClock.now + .milliseconds(Int($0 * 1000)) }
        let consumer = Task {
            var view = ScanView()
            var lastDraw = ContinuousClock.now - .seconds(1)
            for await discovery in stream {
                let row = ScanView.Row(discovery)
                if live {
                    view.update(row)
                    if ContinuousClock.now - lastDraw >= .milliseconds(500) {
                        StandardStreams.out(view.screen())
                        lastDraw = .now
                    }
                } else {
                    StandardStreams.out(row.line + "\n")
                }
            }
            return view
        }
        if let deadline { try? await Task.sleep(until: deadline) } else { await waitForInterrupt() }
        consumer.cancel()
        let view = await consumer.value
        await manager.close()
        if live { StandardStreams.out(view.screen()) }
        return .success
    }

    /// Returns on SIGINT or SIGTERM.
    private static func waitForInterrupt() async {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            sources.append(source)
        }
        for await _ in stream { break }
        for source in sources { source.cancel() }
    }
}

/// The rows of `blebridge scan`, one per device, and their rendering.
struct ScanView {
    struct Row: Sendable {
        var address: BluetoothAddress
        var name: String?
        var rssi: Int?
        var services: [BluetoothUUID]
        var decoded: String

        init(_ discovery: Discovery) {
            let advertisement = discovery.advertisementData
            address = discovery.identifier
            name = advertisement.localName
            rssi = discovery.rssi
            services = advertisement.serviceUUIDs
            decoded = Self.decode(advertisement, address: discovery.identifier)
        }

        /// Known formats decoded to `name=value` pairs; anything else as hex.
        static func decode(_ advertisement: AdvertisementData, address: BluetoothAddress) -> String {
            let readings = DecoderRegistry.standard.decodeAdvertisement(
                serviceData: advertisement.serviceData, manufacturerData: advertisement.manufacturerData,
                context: AdvertisementContext(address: address))
            var parts: [String] = readings.filter { $0.error == nil }.map { reading in
                reading.decoder + " "
                    + reading.fields.map { "\($0.name)=\($0.value.jsonString)\($0.unit.map { " " + $0 } ?? "")" }
                    .joined(separator: " ")
            }
            if parts.isEmpty {
                parts += advertisement.manufacturerData.keys.sorted().map { company in
                    "mfr[\(hex16(company))]=" + hex(advertisement.manufacturerData[company] ?? [])
                }
                parts += advertisement.serviceData.keys.sorted().map { uuid in
                    "svc[\(uuid)]=" + hex(advertisement.serviceData[uuid] ?? [])
                }
            }
            return parts.joined(separator: "; ")
        }

        var line: String {
            let rssiText = rssi.map { "\($0) dBm" } ?? "-"
            let servicesText = services.isEmpty ? "" : " services=" + services.map(\.description).joined(separator: ",")
            let decodedText = decoded.isEmpty ? "" : " " + decoded
            return "\(address) \(rssiText) \(name.map { "\"\($0)\"" } ?? "(no name)")\(servicesText)\(decodedText)"
        }
    }

    private(set) var rows: [BluetoothAddress: Row] = [:]

    mutating func update(_ row: Row) {
        var merged = row
        if merged.name == nil { merged.name = rows[row.address]?.name }
        rows[row.address] = merged
    }

    /// The whole table, with the escape codes that redraw it from the top of the terminal.
    func screen() -> String {
        let header = "blebridge scan: \(rows.count) devices (Ctrl-C to stop)\n"
        let lines = rows.values.sorted { ($0.rssi ?? -999) > ($1.rssi ?? -999) }.map(\.line)
        return "\u{1B}[H\u{1B}[2J" + header + lines.joined(separator: "\n") + "\n"
    }
}

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { byte in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }.joined()
}

private func hex16(_ value: UInt16) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
