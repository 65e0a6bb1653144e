import Timekeeping

/// Everything ``MQTTClient`` needs to reach a broker.
package struct MQTTConfiguration: Sendable {
    /// The broker, from `mqtt://host:port` or `mqtts://host:port`.
    package var broker: MQTTBrokerAddress
    /// The client identifier; required for persistent sessions (``cleanSession`` false).
    package var clientID: String
    package var protocolVersion: MQTTProtocolVersion
    package var username: String?
    package var password: MQTTSecret?
    /// Keep-alive interval (whole seconds, at least 5 s).
    package var keepAlive: Duration
    /// True: the broker forgets subscriptions and queued messages at disconnect. False: a
    /// persistent session (MQTT 5: session expiry ``sessionExpiry``).
    package var cleanSession: Bool
    /// MQTT 5 session expiry used when ``cleanSession`` is false (default: never expires).
    package var sessionExpiry: UInt32
    /// TLS settings; required to be non-nil or defaulted for `mqtts://` (system CAs).
    package var tls: MQTTTLSConfiguration?
    /// The last will, published by the broker when the connection drops without DISCONNECT.
    package var will: MQTTMessage?
    /// Delay before the first reconnect attempt; doubles per failure up to ``maximumReconnectDelay``.
    package var minimumReconnectDelay: Duration
    package var maximumReconnectDelay: Duration
    /// How long a connection attempt may take from TCP connect to CONNACK.
    package var connectTimeout: Duration
    /// MQTT 5: the Maximum Packet Size sent on CONNECT (bytes, whole packet); the broker then
    /// never sends this client a larger packet (it drops it instead), so an oversized publish is
    /// never read into memory. nil: no limit announced. MQTT 3.1.1 has no such property: the
    /// broker's own limit (mosquitto's `max_packet_size`) is the only cap there.
    package var maximumPacketSize: UInt32?
    /// QoS 1 and 2 publishes libmosquitto keeps on the wire at once (`MOSQ_OPT_SEND_MAXIMUM`); the
    /// rest wait in its queue and go out as acknowledgements arrive. libmosquitto's own default is
    /// 20; an MQTT 5 broker's Receive Maximum (CONNACK) lowers it further. nil: libmosquitto's default.
    package var sendMaximum: Int?
    /// The wall clock that stamps received messages (``MQTTMessage/receivedAt``).
    package var clock: any BridgeClock

    /// - Parameter url: `mqtt://host[:port]` or `mqtts://host[:port]`.
    package init(
        url: String, clientID: String, protocolVersion: MQTTProtocolVersion = .v5, username: String? = nil,
        password: MQTTSecret? = nil, keepAlive: Duration = .seconds(30), cleanSession: Bool = true,
        sessionExpiry: UInt32 = UInt32.max, tls: MQTTTLSConfiguration? = nil, will: MQTTMessage? = nil,
        minimumReconnectDelay: Duration = .milliseconds(250), maximumReconnectDelay: Duration = .seconds(30),
        connectTimeout: Duration = .seconds(10), maximumPacketSize: UInt32? = nil, sendMaximum: Int? = nil,
        clock: any BridgeClock = SystemClock()
    ) throws(MQTTError) {
        self.sendMaximum = sendMaximum
        self.clock = clock
        self.broker = try MQTTBrokerAddress(url: url)
        self.clientID = clientID
        self.protocolVersion = protocolVersion
        self.username = username
        self.password = password
        self.keepAlive = keepAlive
        self.cleanSession = cleanSession
        self.sessionExpiry = sessionExpiry
        self.tls = tls
        self.will = will
        self.minimumReconnectDelay = minimumReconnectDelay
        self.maximumReconnectDelay = maximumReconnectDelay
        self.connectTimeout = connectTimeout
        self.maximumPacketSize = maximumPacketSize
    }

    /// Checks what can be checked without I/O; ``MQTTClient`` calls it before starting.
    func validate() throws(MQTTError) {
        if !cleanSession && clientID.isEmpty {
            throw MQTTError(.invalidConfiguration, "a persistent session (clean_session false) needs a client id")
        }
        if keepAlive < .seconds(5) || keepAlive > .seconds(65535) {
            throw MQTTError(.invalidConfiguration, "keep-alive must be between 5 s and 65535 s")
        }
        if let sendMaximum, !(1...65535).contains(sendMaximum) {
            throw MQTTError(.invalidConfiguration, "the send maximum must be between 1 and 65535")
        }
        if password != nil && username == nil {
            throw MQTTError(.invalidConfiguration, "a password needs a username")
        }
        if tls != nil && !broker.usesTLS {
            throw MQTTError(.invalidConfiguration, "TLS settings given for \(broker); use an mqtts:// URL")
        }
        if let tls, (tls.certificateFile == nil) != (tls.keyFile == nil) {
            throw MQTTError(
                .invalidConfiguration, "a client certificate needs its key file, and the key its certificate")
        }
        if minimumReconnectDelay <= .zero || maximumReconnectDelay < minimumReconnectDelay {
            throw MQTTError(.invalidConfiguration, "reconnect delays must be positive with minimum ≤ maximum")
        }
        if maximumPacketSize == 0 {
            throw MQTTError(.invalidConfiguration, "the maximum packet size must be at least 1 byte")
        }
        if let will {
            try MQTTTopic.validateName(will.topic)
            if protocolVersion == .v311 && !will.properties.isEmpty {
                throw MQTTError(.unsupported, "will properties need MQTT 5")
            }
        }
    }
}
