import JSON

/// The JSON answer to a command: `{"transaction":…,"status":"ok","data":{…}}` or
/// `{"transaction":…,"status":"error","error":{"code":"not_allowed","message":"…"}}`.
public enum CommandResponse {
    public static func ok(transaction: JSONValue?, data: JSONValue? = nil) -> JSONValue {
        var members: [JSONMember] = []
        if let transaction { members.append(JSONMember("transaction", transaction)) }
        members.append(JSONMember("status", "ok"))
        if let data { members.append(JSONMember("data", data)) }
        return .object(members)
    }

    public static func error(_ failure: CommandFailure) -> JSONValue {
        var members: [JSONMember] = []
        if let transaction = failure.transaction { members.append(JSONMember("transaction", transaction)) }
        members.append(JSONMember("status", "error"))
        members.append(
            JSONMember(
                "error",
                .object([
                    JSONMember("code", .string(failure.code.rawValue)), JSONMember("message", .string(failure.message)),
                ])))
        return .object(members)
    }
}
