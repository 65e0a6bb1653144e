import Bluetooth
import Foundation

/// A write a client made to a simulated characteristic, as the control channel reports it.
package struct RecordedWrite: Sendable, Equatable {
    package var characteristic: BluetoothUUID
    package var value: [UInt8]
    /// `request`, `command` or `reliable`; AcquireWrite packets are `command`.
    package var type: CharacteristicState.WriteType
    /// False when the peer refused the value (a write command outside the allowed range is dropped silently).
    package var accepted: Bool
    /// The unique bus name of the writer.
    package var sender: String
    package var time: Date

    package init(
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
