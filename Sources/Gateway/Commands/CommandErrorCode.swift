import JSON

/// The fixed set of error codes in command responses (`"error":{"code":…}`), documented in
/// docs/mqtt.md. Clients may switch on these strings; new codes are only ever added.
package enum CommandErrorCode: String, Sendable, Hashable, CaseIterable, Error {
    /// The payload is not valid JSON (or not a JSON object).
    case invalidJSON = "invalid_json"
    /// Valid JSON, but a key is missing, unknown, or has the wrong type; or an unknown request topic.
    case invalidRequest = "invalid_request"
    /// The payload is larger than the gateway accepts for a command.
    case payloadTooLarge = "payload_too_large"
    /// No device with that id in the configuration.
    case unknownDevice = "unknown_device"
    /// The configuration does not allow this device / characteristic / operation.
    case notAllowed = "not_allowed"
    /// The value does not match the declared format or bounds.
    case invalidValue = "invalid_value"
    /// The value is longer than the declared maximum, the ATT limit, or the link's MTU allows.
    case valueTooLong = "value_too_long"
    /// The device's command rate limit is exhausted; retry later.
    case rateLimited = "rate_limited"
    /// The device is not reachable (not in range, adapter off, connection failed).
    case deviceUnavailable = "device_unavailable"
    /// The operation did not complete in time.
    case timeout
    /// The device needs pairing and the pairing BlueZ started failed (BlueZ `NotPermitted` "Not paired"):
    /// no passkey configured, a wrong one, or the device refused; the message names the fix.
    case notPaired = "not_paired"
    /// BlueZ reported an error; the message carries its name.
    case bleError = "ble_error"
    /// A bug or unexpected state in the gateway.
    case `internal`
    /// `bridge/request/device/adopt`: the id asked for is a device's already.
    case idTaken = "id_taken"
    /// The MQTT 5 response topic is not one answers may go to (see ``ResponseTopicPolicy``).
    case responseTopicNotAllowed = "response_topic_not_allowed"
    /// Shared-broker mode: no gateway of the installation can take the device (none hears it, or
    /// none has a free slot), so none executes the command (docs/multi-gateway.md).
    case noOwner = "no_owner"
}

/// A refused or failed command: the code, a human message, and the caller's transaction.
public struct CommandFailure: Error, Sendable, Hashable {
    package var code: CommandErrorCode
    package var message: String
    package var transaction: JSONValue?

    package init(_ code: CommandErrorCode, _ message: String, transaction: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.transaction = transaction
    }
}
