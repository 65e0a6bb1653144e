/// TLS settings for `mqtts://` brokers.
///
/// The broker's certificate is always verified (chain and host name) unless ``insecure`` is
/// set explicitly. Without ``caFile`` the system's CA store is used.
package struct MQTTTLSConfiguration: Sendable, Hashable {
    /// PEM file of the CA(s) that signed the broker's certificate; nil = the system CAs.
    package var caFile: String?
    /// PEM client certificate, for brokers that require one (with ``keyFile``).
    package var certificateFile: String?
    /// PEM private key of ``certificateFile`` (unencrypted).
    package var keyFile: String?
    /// Skip host-name verification. Only for test set-ups; logged as a warning.
    package var insecure: Bool

    package init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, insecure: Bool = false)
    {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.insecure = insecure
    }
}
