/// What a command may do to a characteristic.
public enum GATTOperation: String, Sendable, Hashable, CaseIterable {
    case read, write, notify
}

/// Write with response (ATT Write Request) or without (ATT Write Command).
public enum GATTWriteType: String, Sendable, Hashable {
    case withResponse = "with_response"
    case withoutResponse = "without_response"
}
