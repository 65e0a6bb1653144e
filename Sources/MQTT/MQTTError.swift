/// An error from the MQTT client, with a code you can `catch` on and a message for people.
///
/// ```swift
/// do { try await client.publish(message) }
/// catch let error as MQTTError where error.code == .noConnection { /* keep it in the outbox */ }
/// ```
///
/// Every libmosquitto result (`MOSQ_ERR_*`), CONNACK refusal and MQTT 5 reason code reaches
/// callers through one funnel (`MosquittoResult`), so the same failure always has the same code.
package struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, coarse enough to decide what to do about it.
    package enum Code: String, Sendable, Hashable, CaseIterable {
        /// The broker answered CONNACK with a refusal that is not about credentials
        /// (server unavailable, client identifier rejected, banned, quota, …).
        case connectionRefused
        /// The broker refused the user name or password (CONNACK 4 / 0x86).
        case badCredentials
        /// The broker accepted the credentials but does not allow this client or operation
        /// (CONNACK 5 / 0x87, PUBACK/SUBACK 0x87).
        case notAuthorized
        /// TLS set-up or handshake failed (unknown CA, certificate verification, bad key file, …).
        case tlsFailure
        /// The broker's address could not be reached (connection refused by the host, no route, …).
        case unreachable
        /// The broker's host name could not be resolved.
        case dnsFailure
        /// The payload (or packet) is larger than the broker accepts.
        case payloadTooLarge
        /// A topic name or filter is invalid (wildcards in a publish topic, bad UTF-8, empty, …).
        case invalidTopic
        /// The operation needs a connection and the client is not connected right now.
        case noConnection
        /// The connection dropped (or the client was stopped) before the broker acknowledged.
        case connectionLost
        /// A deadline passed (CONNACK not received in time, keep-alive expired).
        case timeout
        /// The broker rejected a publish or subscription with an MQTT 5 reason code.
        case rejected
        /// The requested QoS is above what the broker supports.
        case qosNotSupported
        /// A feature is not available with this protocol version or build (e.g. MQTT 5 properties over 3.1.1).
        case unsupported
        /// The configuration cannot work (bad URL, unreadable password file, missing environment variable, …).
        case invalidConfiguration
        /// The broker (or libmosquitto) saw a protocol violation.
        case protocolError
        /// libmosquitto ran out of memory.
        case outOfMemory
        /// Anything libmosquitto reports that has no better code.
        case unknown
    }

    package let code: Code
    /// A sentence for logs and users; never contains a password.
    package let message: String
    /// The libmosquitto result (`MOSQ_ERR_*`) or MQTT reason code behind the error, when there is one.
    package let underlyingCode: Int32?
    /// For a ``Code/tlsFailure`` that refused the broker's certificate: which check failed.
    package let tlsCheck: MQTTTLSCheck?

    package init(_ code: Code, _ message: String, underlyingCode: Int32? = nil, tlsCheck: MQTTTLSCheck? = nil) {
        self.code = code
        self.message = message
        self.underlyingCode = underlyingCode
        self.tlsCheck = tlsCheck
    }

    package var description: String { "MQTT \(code.rawValue): \(message)" }
}
