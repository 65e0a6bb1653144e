/// What a decoded field means, in the terms Home Assistant MQTT discovery uses.
///
/// `component` says which entity type fits (`sensor`, `binary_sensor`, `event`) or that the field
/// is an attribute only (identifiers, flags, strings); `deviceClass` is Home Assistant's
/// `device_class` when one exists; `stateClass` is its `state_class`.
public struct FieldKind: Sendable, Hashable {
    public enum Component: String, Sendable, Hashable {
        case sensor
        case binarySensor = "binary_sensor"
        case event
        /// Published in the JSON state, no entity of its own by default.
        case attribute
    }

    public enum StateClass: String, Sendable, Hashable {
        case measurement
        case total
        case totalIncreasing = "total_increasing"
        case measurementAngle = "measurement_angle"
    }

    public var component: Component
    public var deviceClass: String?
    public var stateClass: StateClass?
    /// An event entity's `event_types`: every value the field can take (a button's `press`,
    /// `double_press`, …); empty for other components.
    public var eventTypes: [String]

    public init(
        component: Component, deviceClass: String? = nil, stateClass: StateClass? = nil, eventTypes: [String] = []
    ) {
        self.component = component
        self.deviceClass = deviceClass
        self.stateClass = stateClass
        self.eventTypes = eventTypes
    }

    /// Not an entity by itself (identifiers, strings, flags, raw bytes).
    public static let attribute = FieldKind(component: .attribute)
    /// A numeric measurement without a Home Assistant device class (heart rate, cadence, …).
    public static let measurement = FieldKind(component: .sensor, stateClass: .measurement)
    /// A numeric counter that only grows (revolutions, energy totals).
    public static let counter = FieldKind(component: .sensor, stateClass: .totalIncreasing)

    /// A sensor with a Home Assistant device class and `state_class: measurement`.
    public static func sensor(_ deviceClass: String, stateClass: StateClass? = .measurement) -> FieldKind {
        FieldKind(component: .sensor, deviceClass: deviceClass, stateClass: stateClass)
    }

    /// A binary sensor with an optional Home Assistant device class.
    public static func binary(_ deviceClass: String?) -> FieldKind {
        FieldKind(component: .binarySensor, deviceClass: deviceClass)
    }

    /// An event entity (buttons, dimmers): the field's string value is the event type, one of
    /// `types`, and the field is in the state only with the reading that carried the event.
    public static func event(_ deviceClass: String?, types: [String]) -> FieldKind {
        FieldKind(component: .event, deviceClass: deviceClass, eventTypes: types)
    }

    public static let temperature = sensor("temperature")
    public static let humidity = sensor("humidity")
    public static let pressure = sensor("pressure")
    public static let battery = sensor("battery")
    public static let voltage = sensor("voltage")
    public static let signalStrength = sensor("signal_strength")
    public static let weight = sensor("weight")
    public static let distance = sensor("distance")
    public static let speed = sensor("speed")
    public static let power = sensor("power")
    public static let energy = sensor("energy", stateClass: .totalIncreasing)
    public static let duration = sensor("duration")
    public static let timestamp = FieldKind(component: .sensor, deviceClass: "timestamp")
}
