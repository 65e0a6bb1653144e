/// One line of scripts/differential/oracle.py: a payload and what the reference parser made of it.
struct OracleCase: Decodable, Sendable {
    var family: String
    /// How the generator made the payload (`plain`, `encrypted`, `wrong_key`, `…_humidity_floor`).
    var `case`: String
    var hex: String
    var address: String
    var key: String?
    /// The reference's values by its key (binary sensors as `binary:<key>`); nil when it reported
    /// nothing.
    var oracle: [String: OracleValue]?
    /// BTHome: `[object id, the reference's value for that object]` in frame order.
    var objects: [[OracleValue]]?
    /// Manufacturer-data families: the company id BlueZ reports (`hex` is the rest of the entry).
    var company: Int?
    /// Manufacturer-data families: the advertised local name.
    var name: String?
    /// The whole advertisement, for families that are not one service-data entry: service data
    /// by 16-bit UUID (hex) and manufacturer data by decimal company id, each as hex.
    var serviceData: [String: String]?
    var manufacturerData: [String: String]?
    /// The service UUIDs the advertiser lists.
    var serviceUUIDs: [String]?

    enum CodingKeys: String, CodingKey {
        case family, `case`, hex, address, key, oracle, objects, company, name
        case serviceData = "service_data"
        case manufacturerData = "manufacturer_data"
        case serviceUUIDs = "service_uuids"
    }
}

/// A JSON scalar from the reference side.
enum OracleValue: Decodable, Sendable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case number(Double)
    case string(String)
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    var description: String {
        switch self {
        case .bool(let value): return String(value)
        case .number(let value): return String(value)
        case .string(let value): return "\"\(value)\""
        case .null: return "null"
        }
    }
}
