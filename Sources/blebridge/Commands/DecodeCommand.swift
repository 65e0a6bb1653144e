import Bluetooth
import ByteLayouts
import Decoders
import Foundation
import JSON

/// `blebridge decode`: decodes a characteristic value or advertisement payload given in hex and
/// prints the fields as JSON (for users debugging a device).
struct DecodeCommand: CLICommand {
    static let name = "decode"
    static let summary = "Decode a characteristic value or advertisement payload given in hex"
    static let usage = """
        Usage: blebridge decode [options] HEX

        Decodes HEX (e.g. 0x16480004 or "16 48 00 04") and prints the fields as one JSON object.

        What the bytes are (one of):
          --uuid UUID|NAME           a characteristic value: 2a37, a full UUID, or a decoder name
                                     such as heart_rate_measurement (default: raw)
          --decoder NAME             a characteristic decoder by name (see --list)
          --layout FILE              a user-defined byte layout (JSON, as in the configuration)
          --service-data UUID        advertisement service data for UUID (fcd2 BTHome, fe95
                                     Xiaomi MiBeacon, feaa Eddystone, 181a ATC/pvvx thermometers,
                                     fd3d SwitchBot, fdcd Qingping, 181d/181b Xiaomi scales)
          --manufacturer-data ID     advertisement manufacturer data for company ID (hex: 004c
                                     iBeacon, 0499 Ruuvi, ec88 Govee, 00dc Oral-B, 02e1
                                     Victron), without the
                                     two company-id bytes (ThermoPro and Inkbird put readings in
                                     them: give the id as BlueZ shows it, e.g. 0bc2)
        Advertisement options:
          --advertisement-decoder NAME   force one advertisement format (bthome, ibeacon, …)
          --with-manufacturer-data ID=HEX   the same advertisement's manufacturer data, for
                                     formats split over both (SwitchBot: 0969=…)
          --with-service-uuid UUID   a service UUID the advertiser lists (SensorPush:
                                     ef090000-11d6-42ba-93b8-9dd7ec090ab0, …0aa9 for the HT1;
                                     Mopeka: fee5)
          --bind-key HEX             bind key (32 hex digits) for encrypted BTHome, MiBeacon v4/v5
                                     and ATC/pvvx payloads; a Victron device's advertisement key
          --address AA:BB:CC:DD:EE:FF    the advertiser's address (encryption nonce)
          --name NAME                the advertised local name (ThermoPro TP357, Inkbird sps/tps
                                     and some Govee models are recognised by it)
        Output:
          --raw                      add the raw bytes as raw_hex
          --units                    print one `name = value unit` line per field instead of JSON
          --list                     list every decoder name and exit

        Exit status: 0 decoded, 65 the bytes could not be decoded (the error names the field;
        the JSON still shows raw_hex), 64 usage error.

        Examples:
          blebridge decode --uuid 2a37 0x164840035003
          blebridge decode --service-data fcd2 0x40000102ca0903bf13
          blebridge decode --service-data fe95 --bind-key 814aac74c4f17b6c1581e1ab87816b99 \\
            --address A4:C1:38:56:53:84 58585b05a084535638c1a475dbc33f642301004a1668a5
          blebridge decode --manufacturer-data 004c 0215426c7565436861726d426561636f6e730efe1355c5
          blebridge decode --manufacturer-data ec88 0003a2d45c00
          blebridge decode --manufacturer-data 0bc2 --name "TP357 (2B54)" 012c0254
          blebridge decode --manufacturer-data 02e1 --bind-key 0df4d0617b6c4e1b9d3f1a2b3c4d5e6f \\
            100289a302b0400d896c8f2dd6a21251f6e8f4039900da
        """

    static func run(_ arguments: inout ArgumentList) async throws -> ExitStatus {
        let registry = DecoderRegistry.standard
        if arguments.flag("list") {
            try arguments.finish()
            StandardStreams.out("Characteristic decoders (--uuid / --decoder):\n")
            for decoder in DecoderRegistry.builtInCharacteristics {
                StandardStreams.out("  \(decoder.uuid.shortString)  \(decoder.name)\n")
            }
            StandardStreams.out("  ----  raw\nAdvertisement decoders (--advertisement-decoder):\n")
            for decoder in DecoderRegistry.builtInAdvertisements {
                StandardStreams.out("  \(decoder.name)  (\(decoder.source))\n")
            }
            return .success
        }
        let uuidText = try arguments.option("uuid")
        let decoderName = try arguments.option("decoder")
        let layoutPath = try arguments.option("layout")
        let serviceUUID = try arguments.option(
            "service-data", expected: "a Bluetooth UUID such as fcd2", parse: BluetoothUUID.init)
        let company = try arguments.option(
            "manufacturer-data", expected: "a 16-bit company id in hex such as 004c",
            parse: { UInt16($0.hasPrefix("0x") ? String($0.dropFirst(2)) : $0, radix: 16) })
        let advertisementDecoder = try arguments.option("advertisement-decoder")
        let companion = try arguments.option(
            "with-manufacturer-data", expected: "a company id and hex such as 0969=aabbccddeeff0e00",
            parse: Self.companyAndBytes)
        let serviceUUIDs = try arguments.option(
            "with-service-uuid", expected: "a Bluetooth UUID", parse: BluetoothUUID.init)
        let bindKey = try arguments.option(
            "bind-key", expected: "16 bytes as 32 hex digits",
            parse: { Hex.bytes($0).flatMap { $0.count == 16 ? $0 : nil } })
        let address = try arguments.option(
            "address", expected: "an address like AA:BB:CC:DD:EE:FF", parse: { BluetoothAddress($0) })
        let localName = try arguments.option("name")
        let includeRaw = arguments.flag("raw")
        let units = arguments.flag("units")
        guard let hex = arguments.positional() else {
            throw CommandLineError.usage("no HEX value given")
        }
        try arguments.finish()
        guard let bytes = Hex.bytes(hex) else {
            throw CommandLineError.usage("'\(hex)' is not hex (an even number of hex digits, optional 0x)")
        }
        let choices = [uuidText != nil, decoderName != nil, layoutPath != nil, serviceUUID != nil, company != nil]
        guard choices.filter({ $0 }).count <= 1 else {
            throw CommandLineError.usage(
                "give only one of --uuid, --decoder, --layout, --service-data, --manufacturer-data")
        }

        let readings: [DecodedReading]
        if serviceUUID != nil || company != nil {
            let context = AdvertisementContext(
                address: address, bindKey: bindKey, localName: localName,
                serviceUUIDs: serviceUUIDs.map { [$0] } ?? [])
            readings = registry.decodeAdvertisement(
                serviceData: serviceUUID.map { [$0: bytes] } ?? [:],
                manufacturerData: (company.map { [$0: bytes] } ?? [:]).merging(companion.map { [$0.0: $0.1] } ?? [:]) {
                    given, _ in given
                }, context: context, decoder: advertisementDecoder)
            if readings.isEmpty {
                throw CommandLineError.failure(
                    "no advertisement decoder accepts this payload; try --advertisement-decoder NAME (see --list)",
                    status: .dataError)
            }
        } else if let layoutPath {
            readings = [try loadLayout(layoutPath).reading(bytes)]
        } else if let decoderName {
            readings = [registry.decode(bytes, uuid: nil, decoder: decoderName)]
        } else if let uuidText {
            if let uuid = BluetoothUUID(uuidText) {
                readings = [registry.decode(bytes, uuid: uuid)]
            } else {
                readings = [registry.decode(bytes, uuid: nil, decoder: uuidText)]
            }
        } else {
            readings = [registry.decode(bytes, uuid: nil)]
        }

        for reading in readings {
            if units {
                StandardStreams.out("# \(reading.decoder)\n")
                for field in reading.fields {
                    StandardStreams.out(
                        "\(field.name) = \(field.value.jsonString)\(field.unit.map { " " + $0 } ?? "")\n")
                }
                if let error = reading.error { StandardStreams.out("error = \(error)\n") }
            } else {
                StandardStreams.out(reading.jsonString(includeRaw: includeRaw) + "\n")
            }
        }
        if let failed = readings.first(where: { !$0.isSuccess }), let error = failed.error {
            StandardStreams.error("blebridge: \(failed.decoder): \(error)\n")
            return .dataError
        }
        return .success
    }

    private static func loadLayout(_ path: String) throws -> ByteLayout {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandLineError.failure("cannot read layout file \(path)", status: .noInput)
        }
        let bytes = [UInt8](data)
        do {
            _ = try JSONParser.files.parse(bytes)
        } catch {
            let (line, column) = error.location(in: bytes)
            throw CommandLineError.failure(
                "\(path):\(line):\(column): not a valid layout: \(error.reason)", status: .dataError)
        }
        do {
            let layout = try JSONDecoder().decode(ByteLayout.self, from: data)
            try layout.validate()
            return layout
        } catch let error as ByteLayoutError {
            throw CommandLineError.failure("\(path): \(error)", status: .dataError)
        } catch {
            throw CommandLineError.failure("\(path): not a valid layout: \(error)", status: .dataError)
        }
    }
}

extension DecodeCommand {
    /// `0969=aabbcc…`: a company id in hex and the manufacturer data's bytes.
    static func companyAndBytes(_ text: String) -> (UInt16, [UInt8])? {
        let parts = text.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, let company = UInt16(parts[0], radix: 16), let bytes = Hex.bytes(String(parts[1]))
        else { return nil }
        return (company, bytes)
    }
}
