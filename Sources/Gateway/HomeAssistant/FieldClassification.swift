import Decoders
import HomeAssistantTables
import JSON

/// How a decoded field appears in Home Assistant: component, device class, unit, state class.
package struct FieldClassification: Sendable, Hashable {
    package var component: String
    package var deviceClass: String?
    package var unit: String?
    package var stateClass: String?
    package var icon: String?
    package var entityCategory: String?
    /// False for entities that change often and matter little (RSSI): Home Assistant creates
    /// them disabled, so they do not fill its recorder unless a user enables them.
    package var enabledByDefault: Bool

    package init(
        component: String = "sensor", deviceClass: String? = nil, unit: String? = nil,
        stateClass: String? = "measurement", icon: String? = nil, entityCategory: String? = nil,
        enabledByDefault: Bool = true
    ) {
        self.component = component
        self.deviceClass = deviceClass
        self.unit = unit
        self.stateClass = stateClass
        self.icon = icon
        self.entityCategory = entityCategory
        self.enabledByDefault = enabledByDefault
    }

    /// The same classification, made acceptable to Home Assistant (``HomeAssistantTables``): a
    /// state class the device class does not allow becomes the one it does, and a device class
    /// whose units do not include the field's is dropped (the unit stays; a sensor without a
    /// device class takes any unit). Decoders declare valid combinations (a test checks every
    /// one); this keeps a layout or an unforeseen unit from producing an entity Home Assistant
    /// refuses.
    func acceptedByHomeAssistant() -> FieldClassification {
        var result = self
        if component == "binary_sensor" {
            if HomeAssistantTables.binarySensorProblem(deviceClass: deviceClass) != nil { result.deviceClass = nil }
            return result
        }
        if HomeAssistantTables.sensorProblem(deviceClass: deviceClass, unit: unit, stateClass: stateClass) != nil {
            result.stateClass =
                stateClass == nil ? nil : HomeAssistantTables.defaultStateClass(deviceClass: deviceClass)
        }
        if HomeAssistantTables.sensorProblem(deviceClass: deviceClass, unit: unit, stateClass: result.stateClass)
            != nil
        {
            result.deviceClass = nil
            if HomeAssistantTables.sensorProblem(deviceClass: nil, unit: unit, stateClass: result.stateClass) != nil {
                result.stateClass = nil
            }
        }
        return result
    }

    /// Classifies a field by the decoder's kind when it has one (component, device class, state
    /// class), else by name, value and unit. Returns nil for fields that are not entities
    /// (attributes such as arrays, identifiers and flags).
    package static func classify(name: String, value: JSONValue, unit: String?, kind: FieldKind?)
        -> FieldClassification?
    {
        guard let kind else { return classify(name: name, value: value, unit: unit)?.acceptedByHomeAssistant() }
        switch value {
        case .array, .object, .null: return nil
        default: break
        }
        let category = name == "rssi" || name.hasPrefix("battery") ? "diagnostic" : nil
        switch kind.component {
        case .attribute:
            return nil
        case .event:
            // An MQTT event entity: the field's value is the event type (a button's `press`).
            guard case .string = value, !kind.eventTypes.isEmpty else { return nil }
            let known = kind.deviceClass.map { HomeAssistantTables.eventDeviceClasses.contains($0) } ?? false
            return FieldClassification(
                component: "event", deviceClass: known ? kind.deviceClass : nil, stateClass: nil)
        case .binarySensor:
            return FieldClassification(
                component: "binary_sensor", deviceClass: kind.deviceClass, stateClass: nil, entityCategory: category
            ).acceptedByHomeAssistant()
        case .sensor:
            return FieldClassification(
                deviceClass: kind.deviceClass, unit: unit.map(normalizedUnit), stateClass: kind.stateClass?.rawValue,
                icon: name == "heart_rate" ? "mdi:heart-pulse" : nil, entityCategory: category,
                enabledByDefault: name != "rssi"
            ).acceptedByHomeAssistant()
        }
    }

    /// Classifies a field by name, value and unit (no decoder kind). Returns nil for values Home
    /// Assistant cannot show as one entity (arrays, objects).
    package static func classify(name: String, value: JSONValue, unit: String?) -> FieldClassification? {
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
                deviceClass: "signal_strength", unit: "dBm", entityCategory: "diagnostic", enabledByDefault: false)
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
        case "μg/m³" where lowered.contains("pm2"): return FieldClassification(deviceClass: "pm25", unit: unit)
        case "μg/m³" where lowered.contains("pm10"): return FieldClassification(deviceClass: "pm10", unit: unit)
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
        HomeAssistantTables.canonicalUnit(unit)
    }
}
