import HomeAssistantTables

extension ByteLayout {
    /// Checks the `device_class` and `unit` every field declares against Home Assistant's tables
    /// (``HomeAssistantTables``), with the state class the gateway gives it: one-bit fields are
    /// binary sensors, numbers are sensors (`measurement` where the class allows it), text has no
    /// state class. Part of ``validate()``.
    func validateHomeAssistant() throws(ByteLayoutError) {
        for (index, field) in fields.enumerated() {
            let path = "fields[\(index)]"
            if let bits = field.bits {
                for (bitIndex, bit) in bits.enumerated() {
                    try Self.check(
                        deviceClass: bit.deviceClass, unit: bit.unit, numeric: true,
                        binary: bit.width == 1 && !bit.hasArithmetic,
                        path: path + ".bits[\(bitIndex)]")
                }
            }
            guard field.type != .bits, field.type != .skip else { continue }
            try Self.check(
                deviceClass: field.deviceClass, unit: field.unit, numeric: field.type.width != nil, binary: false,
                path: path)
        }
    }

    private static func check(
        deviceClass: String?, unit: String?, numeric: Bool, binary: Bool, path: String
    ) throws(ByteLayoutError) {
        if binary {
            if let problem = HomeAssistantTables.binarySensorProblem(deviceClass: deviceClass) {
                throw ByteLayoutError(path: path + ".device_class", message: problem + Self.homeAssistant)
            }
            return
        }
        let stateClass = numeric ? HomeAssistantTables.defaultStateClass(deviceClass: deviceClass) : nil
        if let problem = HomeAssistantTables.sensorProblem(
            deviceClass: deviceClass, unit: unit.map(HomeAssistantTables.canonicalUnit), stateClass: stateClass)
        {
            let known = deviceClass.map { HomeAssistantTables.sensorUnits.index(forKey: $0) != nil } ?? true
            let key = known ? "unit" : "device_class"
            throw ByteLayoutError(path: path + "." + key, message: problem + Self.homeAssistant)
        }
    }

    private static let homeAssistant = " (Home Assistant \(HomeAssistantTables.version))"
}
