import JSON

/// The JSON answer to a command: `{"transaction":…,"status":"ok","data":{…}}` or
/// `{"transaction":…,"status":"error","error":{"code":"not_allowed","message":"…"}}`.
package enum CommandResponse {
    package static func ok(transaction: JSONValue?, data: JSONValue? = nil) -> JSONValue {
        var members: [JSONMember] = []
        if let transaction { members.append(JSONMember("transaction", transaction)) }
        members.append(JSONMember("status", "ok"))
        if let data { members.append(JSONMember("data", data)) }
        return .object(members)
    }

    package static func error(_ failure: CommandFailure) -> JSONValue {
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
