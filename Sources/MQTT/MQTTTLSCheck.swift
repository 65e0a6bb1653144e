/// Which check refused the broker's TLS certificate; ``MQTTError/tlsCheck`` of a
/// ``MQTTError/Code/tlsFailure``, so callers can tell a wrong CA file from an expired certificate.
///
/// ```swift
/// catch let error as MQTTError where error.tlsCheck == .expired { /* renew the broker's certificate */ }
/// ```
package enum MQTTTLSCheck: String, Sendable, Hashable, CaseIterable {
    /// The certificate does not name the host in the broker URL (subjectAltName / common name).
    case hostName
    /// The certificate was issued by a CA that is not trusted (not in `tls.ca_file` / the system store).
    case untrustedIssuer
    /// The certificate's validity ended (`notAfter` is in the past).
    case expired
    /// The certificate's validity has not begun (`notBefore` is in the future; often a wrong clock).
    case notYetValid
    /// The broker presents a self-signed certificate that is not trusted.
    case selfSigned
    /// Another verification failure (revoked, bad signature, wrong purpose, …); the message has OpenSSL's words.
    case other

    /// What failed, for people.
    package var summary: String {
        switch self {
        case .hostName: "the host name in mqtt.url is not one the broker's certificate names (host name mismatch)"
        case .untrustedIssuer:
            "the broker's certificate was issued by a CA that is not trusted (unknown issuer / untrusted CA)"
        case .expired: "the broker's certificate has expired"
        case .notYetValid: "the broker's certificate is not yet valid"
        case .selfSigned: "the broker's certificate is self-signed and not trusted"
        case .other: "the broker's certificate failed verification"
        }
    }

    /// What to change to fix it.
    package var advice: String {
        switch self {
        case .hostName:
            "connect to a name the certificate lists (its subjectAltName entries) in mqtt.url, "
                + "or reissue the broker's certificate with the name or IP address used in mqtt.url"
        case .untrustedIssuer:
            "set mqtt.tls.ca_file to the PEM certificate of the CA that signed the broker's certificate"
        case .expired: "renew the broker's certificate (and check this machine's clock)"
        case .notYetValid: "check this machine's clock (date; NTP), or the certificate's start date"
        case .selfSigned: "put the broker's own certificate (or the CA that should sign it) in mqtt.tls.ca_file"
        case .other: "check the broker's certificate chain against mqtt.tls.ca_file"
        }
    }
}
