import Foundation

/// `mqtt`: the broker connection and how readings are published.
package struct MQTTSettings: Sendable, Equatable {
    package enum ProtocolVersion: String, ConfigurationEnum {
        case v311 = "3.1.1"
        case v5 = "5"
    }

    package var url: BrokerURL
    /// MQTT client identifier; defaults to `gateway_id`.
    package var clientID: String
    package var protocolVersion: ProtocolVersion
    package var username: String?
    /// A file whose contents (without a trailing newline) are the password.
    package var passwordFile: String?
    /// An environment variable holding the password.
    package var passwordEnvironmentVariable: String?
    package var keepAlive: Duration
    package var cleanSession: Bool
    /// First topic level of everything the gateway publishes and subscribes.
    package var baseTopic: String
    /// QoS of readings (0, 1 or 2).
    package var qos: Int
    /// Also publish every characteristic's raw value on its own topic.
    package var rawTopics: Bool
    /// `<device>/availability` as `{"state":"online"}` (like `bridge/state`) instead of `online`.
    package var jsonAvailability: Bool
    /// Readings of one device that arrive within this window share one state publish (a lone
    /// reading waits at most this long); zero publishes every reading's state at once.
    package var stateWindow: Duration
    /// TLS settings; used when `url` is `mqtts://`.
    package var tls: TLSSettings
    /// Topic prefixes, besides `<base_topic>/`, that an MQTT 5 request may name as its response topic.
    package var responseTopicPrefixes: [String]
    /// Shared-broker mode (docs/multi-gateway.md): several gateways with different `gateway_id`s
    /// share this broker and `base_topic`; the gateway's own bridge topics move under
    /// `<base>/bridge/gateways/<gateway_id>` and it follows the other gateways' records. Off by default.
    package var sharedBroker: Bool

    package init(
        url: BrokerURL = BrokerURL(host: "127.0.0.1"), clientID: String = "blebridge",
        protocolVersion: ProtocolVersion = .v5, username: String? = nil, passwordFile: String? = nil,
        passwordEnvironmentVariable: String? = nil, keepAlive: Duration = .seconds(30), cleanSession: Bool = false,
        baseTopic: String = "blebridge", qos: Int = 1, rawTopics: Bool = false,
        stateWindow: Duration = .milliseconds(50), tls: TLSSettings = TLSSettings(),
        responseTopicPrefixes: [String] = [], jsonAvailability: Bool = false, sharedBroker: Bool = false
    ) {
        self.sharedBroker = sharedBroker
        self.jsonAvailability = jsonAvailability
        self.url = url
        self.clientID = clientID
        self.protocolVersion = protocolVersion
        self.username = username
        self.passwordFile = passwordFile
        self.passwordEnvironmentVariable = passwordEnvironmentVariable
        self.keepAlive = keepAlive
        self.cleanSession = cleanSession
        self.baseTopic = baseTopic
        self.qos = qos
        self.rawTopics = rawTopics
        self.stateWindow = stateWindow
        self.tls = tls
        self.responseTopicPrefixes = responseTopicPrefixes
    }

    static let keys = [
        "url", "client_id", "protocol", "username", "password_file", "password_env", "keepalive", "clean_session",
        "base_topic", "qos", "raw_topics", "state_window", "tls", "response_topic_prefixes", "json_availability",
        "shared_broker",
    ]

    /// Reads the password from `password_file` or `password_env`; nil when neither is set.
    /// Errors name the key and say what to fix.
    package func password(environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigurationError)
        -> String?
    {
        if let passwordFile {
            guard let data = FileManager.default.contents(atPath: passwordFile) else {
                let exists = FileManager.default.fileExists(atPath: passwordFile)
                throw ConfigurationError(
                    code: exists ? .unreadable : .fileNotFound, keyPath: "mqtt.password_file",
                    message: exists
                        ? "cannot read \(passwordFile); make it readable by the user blebridge runs as"
                        : "\(passwordFile) does not exist; create it with the broker password")
            }
            var text = String(decoding: data, as: UTF8.self)
            while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
            return text
        }
        if let passwordEnvironmentVariable {
            guard let value = environment[passwordEnvironmentVariable] else {
                throw ConfigurationError(
                    code: .missingKey, keyPath: "mqtt.password_env",
                    message:
                        "the environment variable \(passwordEnvironmentVariable) is not set; set it or use password_file"
                )
            }
            return value
        }
        return nil
    }
}

extension MQTTSettings: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let defaults = MQTTSettings()
        if let text = try reader.string("url", expected: BrokerURL.accepted) {
            switch BrokerURL.parse(text) {
            case .success(let url): self.url = url
            case .failure(let failure):
                throw reader.error(
                    "url", .invalidValue,
                    "\"\(text)\" is not a broker URL: \(failure.reason); expected \(BrokerURL.accepted)")
            }
        } else {
            url = defaults.url
        }
        // The gateway id is the default client id; BridgeConfiguration fills it in when absent.
        clientID = try reader.string("client_id", expected: "a string of 1 to 65535 characters") ?? ""
        protocolVersion = try reader.enumeration(ProtocolVersion.self, "protocol") ?? defaults.protocolVersion
        username = try reader.nonEmptyString("username", expected: "the broker user name")
        passwordFile = try reader.nonEmptyString("password_file", expected: "the path of a file holding the password")
        passwordEnvironmentVariable = try reader.nonEmptyString(
            "password_env", expected: "the name of an environment variable holding the password")
        keepAlive =
            try reader.duration("keepalive", minimum: .seconds(5), maximum: .seconds(65535)) ?? defaults.keepAlive
        cleanSession = try reader.bool("clean_session") ?? defaults.cleanSession
        baseTopic = try reader.string("base_topic", expected: "a topic such as \"blebridge\"") ?? defaults.baseTopic
        if let problem = TopicRules.problem(inTopic: baseTopic) {
            throw reader.error("base_topic", .invalidValue, "\"\(baseTopic)\" \(problem)")
        }
        qos = try reader.integer("qos", in: 0...2) ?? defaults.qos
        rawTopics = try reader.bool("raw_topics") ?? defaults.rawTopics
        jsonAvailability = try reader.bool("json_availability") ?? defaults.jsonAvailability
        sharedBroker = try reader.bool("shared_broker") ?? defaults.sharedBroker
        stateWindow =
            try reader.duration("state_window", minimum: .zero, maximum: .seconds(1)) ?? defaults.stateWindow
        tls = try reader.object(TLSSettings.self, "tls") ?? defaults.tls
        let prefixExpected = "a topic prefix such as \"myapp/replies\""
        responseTopicPrefixes =
            try reader.decode(
                [String].self, "response_topic_prefixes", expected: "a list of topic prefixes",
                elementExpected: prefixExpected) ?? defaults.responseTopicPrefixes
        for (index, prefix) in responseTopicPrefixes.enumerated() {
            if let problem = TopicRules.problem(inTopic: prefix) {
                throw ConfigurationError(
                    code: .invalidValue, keyPath: reader.keyPath("response_topic_prefixes") + "[\(index)]",
                    message: "\"\(prefix)\" \(problem)")
            }
        }

        if passwordFile != nil, passwordEnvironmentVariable != nil {
            throw reader.error("password_env", .conflict, "give password_file or password_env, not both")
        }
        if passwordFile != nil || passwordEnvironmentVariable != nil, username == nil {
            throw reader.error("username", .missingKey, "a password needs a username; set mqtt.username")
        }
        if !url.usesTLS, tls != TLSSettings() {
            throw reader.error(
                "tls", .conflict, "TLS settings need an mqtts:// url; change mqtt.url to mqtts://\(url.host):8883")
        }
    }
}
