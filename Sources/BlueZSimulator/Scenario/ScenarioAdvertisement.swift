import Bluetooth
import JSON

/// What a device puts in its advertisements: service UUIDs, manufacturer and service data.
package struct ScenarioAdvertisement: Sendable, Equatable, Decodable {
    /// Manufacturer-specific data for one company identifier.
    package struct ManufacturerData: Sendable, Equatable, Decodable {
        package var company: UInt16
        package var value: [UInt8]
        package var generator: ScenarioGenerator?

        package init(company: UInt16, value: [UInt8] = [], generator: ScenarioGenerator? = nil) {
            self.company = company
            self.value = value
            self.generator = generator
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case company, value, generator }

        package init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            company = try container.decode(UInt16.self, forKey: .company)
            value =
                try container.decodeHexIfPresent(forKey: .value) ?? []
            generator = try container.decodeIfPresent(ScenarioGenerator.self, forKey: .generator)
        }
    }

    /// Service data for one service UUID.
    package struct ServiceData: Sendable, Equatable, Decodable {
        package var uuid: BluetoothUUID
        package var value: [UInt8]
        package var generator: ScenarioGenerator?

        package init(uuid: BluetoothUUID, value: [UInt8] = [], generator: ScenarioGenerator? = nil) {
            self.uuid = uuid
            self.value = value
            self.generator = generator
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case uuid, value, generator }

        package init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            uuid = try container.decodeUUID(forKey: .uuid)
            value =
                try container.decodeHexIfPresent(forKey: .value) ?? []
            generator = try container.decodeIfPresent(ScenarioGenerator.self, forKey: .generator)
        }
    }

    package var serviceUUIDs: [BluetoothUUID]
    package var manufacturerData: [ManufacturerData]
    package var serviceData: [ServiceData]
    /// How often advertised data is regenerated (new packet id, new reading); defaults to the advertising interval.
    package var updateInterval: Duration?

    package init(
        serviceUUIDs: [BluetoothUUID] = [], manufacturerData: [ManufacturerData] = [], serviceData: [ServiceData] = [],
        updateInterval: Duration? = nil
    ) {
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.updateInterval = updateInterval
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case serviceUUIDs = "service_uuids"
        case manufacturerData = "manufacturer_data"
        case serviceData = "service_data"
        case updateInterval = "update_interval"
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        serviceUUIDs =
            try container.decodeParsedIfPresent(
                [String].self, forKey: .serviceUUIDs, accepted: "a list of UUIDs (\(ScenarioParsing.uuidForm))"
            ) { texts in
                let parsed = texts.compactMap(ScenarioParsing.uuid)
                return parsed.count == texts.count ? parsed : nil
            } ?? []
        manufacturerData = try container.decodeIfPresent([ManufacturerData].self, forKey: .manufacturerData) ?? []
        serviceData = try container.decodeIfPresent([ServiceData].self, forKey: .serviceData) ?? []
        updateInterval = try container.decodeIfPresent(ScenarioDuration.self, forKey: .updateInterval)?.duration
        if let updateInterval, updateInterval < .milliseconds(10) {
            throw container.invalid(.updateInterval, "update interval below 10 ms")
        }
    }
}
