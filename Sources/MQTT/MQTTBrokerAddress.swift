/// A broker address parsed from `mqtt://host[:port]` or `mqtts://host[:port]`.
///
/// Default ports: 1883 for `mqtt`, 8883 for `mqtts`. IPv6 literals go in brackets
/// (`mqtt://[::1]:1883`). Paths, queries and user information are rejected: credentials
/// belong in ``MQTTConfiguration/username`` and ``MQTTConfiguration/password``, never in a URL
/// that may be logged.
package struct MQTTBrokerAddress: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: UInt16
    /// True for `mqtts://`.
    package var usesTLS: Bool

    package init(host: String, port: UInt16, usesTLS: Bool) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
    }

    /// Parses `url`; throws ``MQTTError/Code/invalidConfiguration`` naming what is accepted.
    package init(url: String) throws(MQTTError) {
        func invalid(_ why: String) -> MQTTError {
            MQTTError(
                .invalidConfiguration,
                "invalid broker URL '\(url)': \(why) (accepted: mqtt://host[:port] or mqtts://host[:port])")
        }
        let usesTLS: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") {
            usesTLS = false
            rest = url.dropFirst("mqtt://".count)
        } else if url.hasPrefix("mqtts://") {
            usesTLS = true
            rest = url.dropFirst("mqtts://".count)
        } else {
            throw invalid("unknown scheme")
        }
        var authority = rest
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        if authority.contains("/") || authority.contains("?") || authority.contains("#") {
            throw invalid("paths, queries and fragments are not allowed")
        }
        if authority.contains("@") { throw invalid("put credentials in username/password, not in the URL") }
        let host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("unclosed IPv6 bracket") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw invalid("missing host") }
        var port: UInt16 = usesTLS ? 8883 : 1883
        if let portText {
            guard let value = UInt16(portText), value > 0 else { throw invalid("port must be 1–65535") }
            port = value
        }
        self.init(host: String(host), port: port, usesTLS: usesTLS)
    }

    package var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(usesTLS ? "mqtts" : "mqtt")://\(shownHost):\(port)"
    }
}
