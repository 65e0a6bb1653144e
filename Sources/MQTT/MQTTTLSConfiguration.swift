/// TLS settings for `mqtts://` brokers.
///
/// The broker's certificate is always verified (chain and host name) unless ``insecure`` is
/// set explicitly. Without ``caFile`` the system's CA store is used.
public struct MQTTTLSConfiguration: Sendable, Hashable {
    /// PEM file of the CA(s) that signed the broker's certificate; nil = the system CAs.
    public var caFile: String?
    /// PEM client certificate, for brokers that require one (with ``keyFile``).
    public var certificateFile: String?
    /// PEM private key of ``certificateFile`` (unencrypted).
    public var keyFile: String?
    /// Skip host-name verification. Only for test set-ups; logged as a warning.
    public var insecure: Bool

    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, insecure: Bool = false) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.insecure = insecure
    }
}
