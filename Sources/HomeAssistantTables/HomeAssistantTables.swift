/// What Home Assistant accepts for a sensor or binary sensor announced over MQTT discovery:
/// device classes, their units and their state classes (``version`` names the release the tables
/// in `HomeAssistantTables+Data.swift` come from). Home Assistant refuses or flags an entity
/// outside these tables (a `temp` device class, a temperature in `%`, a `volume` that is a
/// `measurement`); the gateway checks every entity it announces, and `check-config` every field a
/// layout declares, against them.
package enum HomeAssistantTables {
    /// The problem Home Assistant has with a sensor of this device class, unit and state class,
    /// or nil when it accepts it. `deviceClass` nil: any unit and state class goes.
    package static func sensorProblem(deviceClass: String?, unit: String?, stateClass: String?) -> String? {
        if let stateClass {
            guard stateClasses.contains(stateClass) else {
                return "state class '\(stateClass)' is not one of \(stateClasses.joined(separator: ", "))"
            }
            if let allowed = stateClassUnits[stateClass], !allowed.contains(unit) {
                return "state class '\(stateClass)' takes \(describe(allowed)), not \(describe(unit))"
            }
        }
        guard let deviceClass else { return nil }
        guard let units = sensorUnits[deviceClass] else {
            return "unknown sensor device class '\(deviceClass)'\(suggestion(for: deviceClass))"
        }
        if let units, !units.contains(unit) {
            return "device class '\(deviceClass)' takes \(describe(units)), not \(describe(unit))"
        }
        if let stateClass, !(sensorStateClasses[deviceClass] ?? []).contains(stateClass) {
            let allowed = sensorStateClasses[deviceClass] ?? []
            return "device class '\(deviceClass)' takes "
                + (allowed.isEmpty ? "no state class" : "state class \(allowed.joined(separator: " or "))")
                + ", not '\(stateClass)'"
        }
        return nil
    }

    /// The problem Home Assistant has with a binary sensor of this device class, or nil.
    package static func binarySensorProblem(deviceClass: String?) -> String? {
        guard let deviceClass, !binarySensorDeviceClasses.contains(deviceClass) else { return nil }
        return "unknown binary sensor device class '\(deviceClass)'"
    }

    /// The problem Home Assistant has with an event entity of this device class and these event
    /// types (it needs at least one), or nil.
    package static func eventProblem(deviceClass: String?, eventTypes: [String]) -> String? {
        if eventTypes.isEmpty { return "an event entity without event types" }
        guard let deviceClass, !eventDeviceClasses.contains(deviceClass) else { return nil }
        return "unknown event device class '\(deviceClass)'"
    }

    /// The state class a sensor of `deviceClass` gets when its source does not say: `measurement`
    /// where Home Assistant allows it, else the counter class it allows, else none.
    package static func defaultStateClass(deviceClass: String?) -> String? {
        guard let deviceClass else { return "measurement" }
        let allowed = sensorStateClasses[deviceClass] ?? []
        return ["measurement", "total_increasing", "total"].first { allowed.contains($0) }
    }

    /// Home Assistant's spelling of a unit written another common way (`C`, `celsius` → `°C`,
    /// `lux` → `lx`; `µ`, the micro sign, is `μ`, the Greek letter, in Home Assistant's tables).
    package static func canonicalUnit(_ unit: String) -> String {
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
        default: unit.replacingMicroSign()
        }
    }

    private static func describe(_ units: [String?]) -> String {
        let names = units.map { $0.map { "'\($0)'" } ?? "no unit" }
        return names.count == 1 ? names[0] : "one of " + names.joined(separator: ", ")
    }

    private static func describe(_ unit: String?) -> String { unit.map { "'\($0)'" } ?? "no unit" }

    /// ` (did you mean 'temperature'?)` for a device class that is a prefix of a known one.
    private static func suggestion(for deviceClass: String) -> String {
        let lowered = deviceClass.lowercased()
        guard lowered.count >= 3,
            let match = sensorUnits.keys.sorted().first(where: { $0.hasPrefix(lowered) || $0 == lowered })
        else { return "" }
        return " (did you mean '\(match)'?)"
    }
}

extension String {
    fileprivate func replacingMicroSign() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\u{B5}" ? "\u{3BC}" : $0 }))
    }
}
