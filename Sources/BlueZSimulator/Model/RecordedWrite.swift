import Bluetooth
import Foundation

/// A write a client made to a simulated characteristic, as the control channel reports it.
public struct RecordedWrite: Sendable, Equatable {
    public var characteristic: BluetoothUUID
    public var value: [UInt8]
    /// `request`, `command` or `reliable`; AcquireWrite packets are `command`.
    public var type: CharacteristicState.WriteType
    /// False when the peer refused the value (a write command outside the allowed range is dropped silently).
    public var accepted: Bool
    /// The unique bus name of the writer.
    public var sender: String
    public var time: Date

    public init(
        characteristic: BluetoothUUID, value: [UInt8], type: CharacteristicState.WriteType, accepted: Bool,
        sender: String,
        time: Date
    ) {
        self.characteristic = characteristic
        self.value = value
        self.type = type
        self.accepted = accepted
        self.sender = sender
        self.time = time
    }
}
