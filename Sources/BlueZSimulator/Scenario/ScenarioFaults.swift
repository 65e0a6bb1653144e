import JSON

/// Faults a device carries from the start of a scenario.
package struct ScenarioFaults: Sendable, Equatable, Decodable {
    /// The next `count` connect attempts fail with this error.
    package struct ConnectFailure: Sendable, Equatable, Decodable {
        package var failure: ConnectFailureKind
        package var count: Int

        package init(_ failure: ConnectFailureKind, count: Int = 1) {
            self.failure = failure
            self.count = count
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case kind, error, message, count }

        package init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            count = try container.decodeIfPresent(Int.self, forKey: .count) ?? 1
            guard count >= 1 else { throw container.invalid(.count, "count must be at least 1") }
            if let kind = try container.decodeIfPresent(String.self, forKey: .kind) {
                guard !container.contains(.error), !container.contains(.message) else {
                    throw container.invalid(.kind, "give either \"kind\" or \"error\" with \"message\", not both")
                }
                guard let parsed = ConnectFailureKind(named: kind) else {
                    throw container.invalid(
                        .kind, "unknown kind \"\(kind)\"; expected " + ConnectFailureKind.names.joined(separator: ", "))
                }
                failure = parsed
            } else {
                let name = try container.decode(String.self, forKey: .error)
                guard name.hasPrefix("org.bluez.Error.") else {
                    throw container.invalid(.error, "expected a BlueZ error name such as org.bluez.Error.Failed")
                }
                failure = .error(
                    BlueZError(name: name, message: try container.decodeIfPresent(String.self, forKey: .message) ?? ""))
            }
        }
    }

    /// The device goes out of range `after` the scenario starts, for `duration` (forever when nil).
    package struct OutOfRange: Sendable, Equatable, Decodable {
        package var after: Duration
        package var duration: Duration?

        package init(after: Duration, duration: Duration?) {
            self.after = after
            self.duration = duration
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case after, duration }

        package init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            after = try container.decode(ScenarioDuration.self, forKey: .after).duration
            duration = try container.decodeIfPresent(ScenarioDuration.self, forKey: .duration)?.duration
        }
    }

    package var connectFailures: [ConnectFailure]
    /// Every connection drops (`le-connection-abort-by-remote` style: Connected false) after this long.
    package var disconnectAfter: Duration?
    package var outOfRange: [OutOfRange]

    package init(
        connectFailures: [ConnectFailure] = [], disconnectAfter: Duration? = nil, outOfRange: [OutOfRange] = []
    ) {
        self.connectFailures = connectFailures
        self.disconnectAfter = disconnectAfter
        self.outOfRange = outOfRange
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case connectFailures = "connect_failures"
        case disconnectAfter = "disconnect_after"
        case outOfRange = "out_of_range"
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        connectFailures = try container.decodeIfPresent([ConnectFailure].self, forKey: .connectFailures) ?? []
        disconnectAfter = try container.decodeIfPresent(ScenarioDuration.self, forKey: .disconnectAfter)?.duration
        outOfRange = try container.decodeIfPresent([OutOfRange].self, forKey: .outOfRange) ?? []
    }
}

/// How one connect attempt fails.
package enum ConnectFailureKind: Sendable, Equatable {
    /// `org.bluez.Error.Failed: le-connection-abort-by-local` after the connect delay (the common BlueZ ≥ 5.62 failure).
    case abortByLocal
    /// `org.bluez.Error.InProgress: In Progress` at once (a stale connection attempt).
    case inProgress
    /// The attempt hangs for the scenario's `connect_timeout`, then fails with `le-connection-abort-by-local`.
    case timeout
    /// The link comes up and `Connect` succeeds, but services never resolve on that link (bluetoothd's ATT MTU
    /// exchange unanswered, as the VM tier saw after an adapter power cycle) until it is disconnected.
    case resolveStall
    /// Any other BlueZ error, after the connect delay.
    case error(BlueZError)

    static let names = ["abort_by_local", "in_progress", "timeout", "resolve_stall"]

    init?(named name: String) {
        switch name {
        case "abort_by_local": self = .abortByLocal
        case "in_progress": self = .inProgress
        case "timeout": self = .timeout
        case "resolve_stall": self = .resolveStall
        default: return nil
        }
    }
}
