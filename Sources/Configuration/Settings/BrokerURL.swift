/// `mqtt.url`: `mqtt://host[:port]` (plain, port 1883) or `mqtts://host[:port]` (TLS, port 8883).
/// IPv6 literals go in brackets: `mqtt://[::1]:1883`.
package struct BrokerURL: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int
    package var usesTLS: Bool

    package init(host: String, port: Int? = nil, usesTLS: Bool = false) {
        self.host = host
        self.usesTLS = usesTLS
        self.port = port ?? (usesTLS ? 8883 : 1883)
    }

    static let accepted = "mqtt://host[:port] or mqtts://host[:port], e.g. \"mqtt://127.0.0.1:1883\""

    /// Parses the URL; nil with a reason when it is not acceptable.
    static func parse(_ text: String) -> Result<BrokerURL, ParseFailure> {
        let usesTLS: Bool
        var rest: Substring
        if text.hasPrefix("mqtt://") {
            usesTLS = false
            rest = text.dropFirst(7)
        } else if text.hasPrefix("mqtts://") {
            usesTLS = true
            rest = text.dropFirst(8)
        } else {
            return .failure(ParseFailure(reason: "the scheme must be mqtt:// or mqtts://"))
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.contains("@") {
            return .failure(
                ParseFailure(reason: "put credentials in mqtt.username and mqtt.password_file, not in the URL"))
        }
        if rest.contains("/") || rest.contains("?") {
            return .failure(ParseFailure(reason: "a broker URL has no path or query"))
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                return .failure(ParseFailure(reason: "an IPv6 address needs a closing ']'"))
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                return .failure(ParseFailure(reason: "unexpected \"\(after)\" after the address"))
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { return .failure(ParseFailure(reason: "the host is missing")) }
        var port: Int?
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                return .failure(ParseFailure(reason: "the port must be a number from 1 to 65535"))
            }
            port = value
        }
        return .success(BrokerURL(host: String(host), port: port, usesTLS: usesTLS))
    }

    struct ParseFailure: Error {
        var reason: String
    }

    package var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(usesTLS ? "mqtts" : "mqtt")://\(hostPart):\(port)"
    }
}
