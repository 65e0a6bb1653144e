/// Write with response (ATT Write Request) or without (ATT Write Command).
public enum GATTWriteType: String, Sendable, Hashable {
    case withResponse = "with_response"
    case withoutResponse = "without_response"
}
