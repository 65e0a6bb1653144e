/// ATT sizes and the MTU arithmetic behind `maximumWriteValueLength(for:)`, plus splitting a long payload into
/// writes that fit (application-level fragmentation; the peripheral's protocol decides how to reassemble).
public enum ATTLimits {
    /// The MTU every LE link starts with.
    public static let defaultMTU = 23
    /// The largest MTU ATT allows.
    public static let maximumMTU = 517
    /// Opcode (1) + handle (2) in a Write Command / Notification.
    public static let headerLength = 3
    /// The longest attribute value (Core spec Vol 3 Part F 3.2.9); BlueZ sends longer `request` writes as
    /// prepared writes up to this length.
    public static let maximumAttributeValueLength = 512

    /// The longest value one write of `type` may carry on a link with `mtu`: MTU − 3 for a write without
    /// response; 512 for a write with response (BlueZ uses prepared writes beyond MTU − 3). An MTU below 23
    /// (unknown or nonsense) counts as 23.
    public static func maximumWriteValueLength(mtu: Int, type: WriteType) -> Int {
        switch type {
        case .withResponse: maximumAttributeValueLength
        case .withoutResponse: max(defaultMTU, min(mtu, maximumMTU)) - headerLength
        }
    }

    /// The longest value a notification can carry on a link with `mtu`.
    public static func maximumNotificationLength(mtu: Int) -> Int {
        max(defaultMTU, min(mtu, maximumMTU)) - headerLength
    }

    /// Throws `invalidValueLength` when `length` does not fit one write of `type` at `mtu`.
    public static func checkWrite(length: Int, mtu: Int, type: WriteType) throws(BluetoothError) {
        let limit = maximumWriteValueLength(mtu: mtu, type: type)
        guard length <= limit else {
            throw BluetoothError(
                .invalidValueLength,
                "a \(type == .withResponse ? "write" : "write without response") carries at most \(limit) bytes "
                    + "at MTU \(mtu); the value has \(length) (split it with ATTLimits.fragments)")
        }
    }

    /// Splits `value` into consecutive pieces of at most `maximumLength` bytes (the last may be shorter). An empty
    /// value gives one empty piece, so that writing "nothing" still writes once.
    public static func fragments(of value: [UInt8], maximumLength: Int) throws(BluetoothError) -> [[UInt8]] {
        guard maximumLength > 0 else {
            throw BluetoothError(.invalidParameters, "fragment length must be positive, got \(maximumLength)")
        }
        guard !value.isEmpty else { return [[]] }
        return stride(from: 0, to: value.count, by: maximumLength).map { start in
            Array(value[start..<min(start + maximumLength, value.count)])
        }
    }
}
