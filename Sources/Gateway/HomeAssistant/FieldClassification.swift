public import Decoders
import JSON

/// How a decoded field appears in Home Assistant: component, device class, unit, state class.
public struct FieldClassification: Sendable, Hashable {
    public var component: String
    public var deviceClass: String?
    public var unit: String?
    public var stateClass: String?
    public var icon: String?
    public var entityCategory: String?

    public init(
        component: String = "sensor", deviceClass: String? = nil, unit: String? = nil,
        stateClass: String? = "measurement", icon: String? = nil, entityCategory: String? = nil
    ) {
        self.component = component
        self.deviceClass = deviceClass
        self.unit = unit
        self.stateClass = stateClass
        self.icon = icon
        self.entityCategory = entityCategory
    }

    /// Classifies a field by the decoder's kind when it has one (component, device class, state
    /// class), else by name, value and unit. Returns nil for fields that are not entities
    /// (attributes such as arrays, identifiers and flags).
    public static func classify(name: String, value: JSONValue, unit: String?, kind: FieldKind?) -> FieldClassification?
    {
        guard let kind else { return classify(name: name, value: value, unit: unit) }
        switch value {
        case .array, .object, .null: return nil
        default: break
        }
        let category = name == "rssi" || name.hasPrefix("battery") ? "diagnostic" : nil
        switch kind.component {
        case .attribute, .event:
            return nil
        case .binarySensor:
            return FieldClassification(
                component: "binary_sensor", deviceClass: kind.deviceClass, stateClass: nil, entityCategory: category)
        case .sensor:
            return FieldClassification(
                deviceClass: kind.deviceClass, unit: unit.map(normalizedUnit), stateClass: kind.stateClass?.rawValue,
                icon: name == "heart_rate" ? "mdi:heart-pulse" : nil, entityCategory: category)
        }
    }

    /// Classifies a field by name, value and unit (no decoder kind). Returns nil for values Home
    /// Assistant cannot show as one entity (arrays, objects).
    public static func classify(name: String, value: JSONValue, unit: String?) -> FieldClassification? {
        switch value {
        case .array, .object, .null: return nil
        case .bool:
            return FieldClassification(component: "binary_sensor", stateClass: nil)
        case .string:
            return FieldClassification(stateClass: nil)
        case .int, .double: break
        }
        let unit = unit.map(normalizedUnit)
        let lowered = name.lowercased()
        if lowered == "rssi" {
            return FieldClassification(
                deviceClass: "signal_strength", unit: "dBm", entityCategory: "diagnostic")
        }
        if lowered.hasPrefix("battery") && (unit == nil || unit == "%") {
            return FieldClassification(deviceClass: "battery", unit: "%", entityCategory: "diagnostic")
        }
        if lowered.contains("temperature") || unit == "°C" || unit == "°F" {
            return FieldClassification(deviceClass: "temperature", unit: unit ?? "°C")
        }
        if lowered.contains("humidity") {
            return FieldClassification(deviceClass: "humidity", unit: "%")
        }
        if lowered.contains("pressure"), let unit,
            ["Pa", "hPa", "kPa", "bar", "mbar", "mmHg", "inHg", "psi"].contains(unit)
        {
            return FieldClassification(deviceClass: "atmospheric_pressure", unit: unit)
        }
        if lowered == "heart_rate" || unit == "bpm" {
            return FieldClassification(unit: "bpm", icon: "mdi:heart-pulse")
        }
        switch unit {
        case "V", "mV": return FieldClassification(deviceClass: "voltage", unit: unit)
        case "lx": return FieldClassification(deviceClass: "illuminance", unit: unit)
        case "ppm" where lowered.contains("co2"): return FieldClassification(deviceClass: "carbon_dioxide", unit: unit)
        case "µg/m³" where lowered.contains("pm2"): return FieldClassification(deviceClass: "pm25", unit: unit)
        case "µg/m³" where lowered.contains("pm10"): return FieldClassification(deviceClass: "pm10", unit: unit)
        case "W": return FieldClassification(deviceClass: "power", unit: unit)
        case "kJ", "J", "Wh", "kWh":
            return FieldClassification(deviceClass: "energy", unit: unit, stateClass: "total_increasing")
        case "m", "mm", "cm": return FieldClassification(deviceClass: "distance", unit: unit)
        case "kg", "g": return FieldClassification(deviceClass: "weight", unit: unit)
        default: return FieldClassification(unit: unit)
        }
    }

    /// Decoder unit spellings → Home Assistant's.
    static func normalizedUnit(_ unit: String) -> String {
        switch unit.lowercased() {
        case "c", "celsius", "degc", "°c": "°C"
        case "f", "fahrenheit", "degf", "°f": "°F"
        case "percent", "%": "%"
        case "dbm": "dBm"
        case "bpm", "beats/min": "bpm"
        case "hpa": "hPa"
        case "pa": "Pa"
        case "kpa": "kPa"
        case "v", "volt": "V"
        case "mv": "mV"
        case "lux", "lx": "lx"
        default: unit
        }
    }
}
