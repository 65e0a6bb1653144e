import BlueZ
import Bluetooth
import Configuration
import Decoders
import Foundation
import Gateway
import JSON
import Timekeeping

#if canImport(Glibc)
    import Glibc
#endif

/// `blebridge scan`: nearby BLE devices, live. On a terminal the table (strongest first) is redrawn
/// in place twice a second; otherwise each discovery is printed as one line.
struct ScanCommand: CLICommand {
    static let name = "scan"
    static let summary = "Show nearby BLE devices (live on a terminal, one line per sighting otherwise)"
    static let usage = """
        Usage: blebridge scan [--bus ADDRESS] [--adapter NAME] [--service UUID[,UUID…]] [--rssi DBM]
                              [--duplicates] [--duration DURATION] [--plain] [--config]
                              [--bind-key ADDRESS=KEY …]

        Scans through BlueZ and shows each device's address, RSSI, name, advertised services, the
        decoder that recognises its advertisement (decoder=bthome, …) and the decoded advertisement
        where the format is known (BTHome, iBeacon, Eddystone, …; raw hex otherwise).

          --bus ADDRESS          the D-Bus bus of BlueZ (default: the system bus, DBUS_SYSTEM_BUS_ADDRESS)
          --adapter NAME         the adapter (default hci0)
          --service UUIDS        only devices advertising one of these services (16-bit or 128-bit, commas)
          --rssi DBM             only devices at least this strong, e.g. -80
          --duplicates           report every advertisement, not only changes
          --duration DURATION    stop after this long, e.g. 5s or 2m (default: until Ctrl-C)
          --plain                one line per sighting even on a terminal
          --config               at the end, print {"devices": [...]}: a ready config.json entry for
                                 each recognised device with a fixed address (id <decoder>_<aabbcc>,
                                 as auto_devices names it)
          --bind-key ADDRESS=KEY the 16-byte key (32 hex digits) of an encrypted device (BTHome,
                                 MiBeacon, ATC/pvvx, Victron), repeatable: its advertisements are
                                 decoded and its --config entry carries the key as bind_key

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
            "duration", expected: DurationParser.acceptedForms,
            parse: { DurationParser.parse($0).flatMap { $0 > .zero ? $0 : nil } })
        let plain = arguments.flag("plain")
        let printConfiguration = arguments.flag("config")
        var bindKeys: [BluetoothAddress: [UInt8]] = [:]
        for text in try arguments.options("bind-key") {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let address = BluetoothAddress(parts[0]), let key = Hex.bytes(parts[1]),
                key.count == 16
            else {
                throw CommandLineError.usage(
                    "--bind-key \(text): expected ADDRESS=KEY, e.g. A4:C1:38:00:11:22=<32 hex digits>")
            }
            bindKeys[address] = key
        }
        try arguments.finish()
        // Taken before the scan starts, so no SIGINT finds the default action (see SimulateCommand).
        let interrupts = SignalEvents.stream([SIGINT, SIGTERM])

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
        let deadline = duration.map { ContinuousClock.now + $0 }
        let consumer = Task {
            var view = ScanView()
            var lastDraw = ContinuousClock.now - .seconds(1)
            for await discovery in stream {
                let row = ScanView.Row(discovery, bindKey: bindKeys[discovery.identifier])
                // Rows are kept only for what is drawn or printed at the end: a plain scan in a busy
                // place would otherwise keep one per rotating private address for as long as it runs.
                if live || printConfiguration { view.update(row) }
                if live {
                    if ContinuousClock.now - lastDraw >= .milliseconds(500) {
                        StandardStreams.out(view.redraw(size: TerminalSize.standardOutput))
                        lastDraw = .now
                    }
                } else {
                    StandardStreams.out(row.line + "\n")
                }
            }
            return view
        }
        // The scan lasts `--duration` or until SIGINT or SIGTERM, whichever comes first.
        if let deadline {
            await Deadline.run(until: deadline) { for await _ in interrupts { return } }
        } else {
            for await _ in interrupts { break }
        }
        consumer.cancel()
        var view = await consumer.value
        await manager.close()
        if live { StandardStreams.out(view.redraw(size: TerminalSize.standardOutput)) }
        if printConfiguration { StandardStreams.out(view.configuration.serialized + "\n") }
        return .success
    }
}

/// The rows of `blebridge scan`, one per device, and their rendering.
struct ScanView {
    struct Row: Sendable {
        var address: BluetoothAddress
        var name: String?
        var rssi: Int?
        var services: [BluetoothUUID]
        /// The first built-in decoder that recognises the advertisement (as `auto_devices` picks it).
        var decoder: String?
        var decoded: String
        /// The key given with `--bind-key` for this address.
        var bindKey: [UInt8]?

        init(_ discovery: Discovery, bindKey: [UInt8]? = nil) {
            self.bindKey = bindKey
            let advertisement = discovery.advertisementData
            address = discovery.identifier
            name = advertisement.localName
            rssi = discovery.rssi
            services = advertisement.serviceUUIDs
            let readings = DecoderRegistry.standard.decodeAdvertisement(
                serviceData: advertisement.serviceData, manufacturerData: advertisement.manufacturerData,
                context: AdvertisementContext(
                    address: discovery.identifier, bindKey: bindKey, localName: advertisement.localName,
                    serviceUUIDs: advertisement.serviceUUIDs))
            decoder = readings.first { $0.isSuccess }?.decoder
            decoded = Self.describe(readings, advertisement)
        }

        /// Known formats decoded to `name=value` pairs; anything else as hex.
        static func describe(_ readings: [DecodedReading], _ advertisement: AdvertisementData) -> String {
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
            let decoderText = decoder.map { " decoder=" + $0 } ?? ""
            let decodedText = decoded.isEmpty ? "" : " " + decoded
            return
                "\(address) \(rssiText) \(name.map { "\"\($0)\"" } ?? "(no name)")\(servicesText)\(decoderText)\(decodedText)"
        }
    }

    private(set) var rows: [BluetoothAddress: Row] = [:]
    /// Lines the previous frame drew (the cursor is below them).
    private var drawnLines = 0

    mutating func update(_ row: Row) {
        var merged = row
        if merged.name == nil { merged.name = rows[row.address]?.name }
        if merged.decoder == nil { merged.decoder = rows[row.address]?.decoder }
        rows[row.address] = merged
    }

    /// The rows, strongest signal first (unknown RSSI last), then by address so equal rows keep their place.
    var sortedRows: [Row] {
        rows.values.sorted { left, right in
            let (a, b) = (left.rssi ?? Int.min, right.rssi ?? Int.min)
            return a != b ? a > b : left.address.description < right.address.description
        }
    }

    /// `--config`: `{"devices": [...]}` with an entry for every recognised device whose address is
    /// fixed (a private address changes within minutes, so a configuration entry for it is
    /// useless), by address; the same entry `bridge/request/device/adopt` answers with.
    var configuration: JSONValue {
        let entries = rows.values.sorted { $0.address < $1.address }.compactMap { row -> JSONValue? in
            guard let decoder = row.decoder, MatchInstances.isFixed(row.address) else { return nil }
            return AdoptedDevices.snippet(
                id: AutoDevices.id(decoder: decoder, address: row.address), name: row.name,
                address: row.address.string, decoder: decoder, bindKey: row.bindKey)
        }
        return .object([JSONMember("devices", .array(entries))])
    }

    /// The header line: `3 devices`, `1 device`.
    var header: String {
        "blebridge scan: \(counted(rows.count, "device")) (Ctrl-C to stop)"
    }

    /// The table drawn over the previous frame in place: the cursor goes back up the lines drawn
    /// last time, each line is rewritten and cleared to its end, and what is below is cleared; the
    /// rest of the screen (the shell prompt, earlier output) is left alone. Lines are cut to the
    /// terminal's width and rows to its height, so the cursor movement stays exact.
    mutating func redraw(size: TerminalSize) -> String {
        let rowsShown = max(1, size.rows - 2)
        let sorted = sortedRows
        var lines = [header] + sorted.prefix(rowsShown).map(\.line)
        if sorted.count > rowsShown { lines.append("… and \(sorted.count - rowsShown) more") }
        let width = max(1, size.columns - 1)
        var text = drawnLines > 0 ? "\r\u{1B}[\(drawnLines)A" : ""
        for line in lines {
            text += String(line.prefix(width)) + "\u{1B}[K\n"
        }
        drawnLines = lines.count
        return text + "\u{1B}[J"
    }
}

/// The size of the terminal on standard output (80×24 when it cannot be asked).
struct TerminalSize: Equatable {
    var columns: Int
    var rows: Int

    static var standardOutput: TerminalSize {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else {
            return TerminalSize(columns: 80, rows: 24)
        }
        return TerminalSize(columns: Int(size.ws_col), rows: Int(size.ws_row))
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
