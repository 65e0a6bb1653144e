/// How a characteristic value is written (`CBCharacteristicWriteType`).
public enum WriteType: String, Sendable, Hashable, CaseIterable {
    /// ATT Write Request: the peripheral acknowledges; errors are reported. Long values (up to 512 bytes) are
    /// written with prepared writes by BlueZ. BlueZ's `type` option `request`.
    case withResponse
    /// ATT Write Command: no acknowledgement, at most MTU − 3 bytes. BlueZ's `type` option `command`.
    case withoutResponse

    /// The value of BlueZ's `WriteValue` `type` option.
    public var bluezType: String {
        switch self {
        case .withResponse: "request"
        case .withoutResponse: "command"
        }
    }

    /// The property the characteristic must declare for this write type.
    public var requiredProperty: CharacteristicProperties {
        switch self {
        case .withResponse: .write
        case .withoutResponse: .writeWithoutResponse
        }
    }
}
