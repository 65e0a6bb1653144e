internal import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one funnel from libmosquitto results and MQTT reason codes to ``MQTTError``.
enum MosquittoResult {
    static let success = MOSQ_ERR_SUCCESS.rawValue

    /// Throws the mapped error unless `rc` is `MOSQ_ERR_SUCCESS`. `errno` must still be the
    /// value libmosquitto left (read it before any other call).
    static func check(_ rc: Int32, _ operation: String, detail: String? = nil) throws(MQTTError) {
        if rc != success { throw error(rc, operation, errnoValue: errno, detail: detail) }
    }

    /// Maps a `MOSQ_ERR_*` value. `errnoValue` refines `MOSQ_ERR_ERRNO` and `MOSQ_ERR_EAI`
    /// (libmosquitto stores the getaddrinfo code in errno); `detail` is appended (e.g. the last
    /// OpenSSL line libmosquitto logged).
    static func error(_ rc: Int32, _ operation: String, errnoValue: Int32 = 0, detail: String? = nil) -> MQTTError {
        let suffix = detail.map { ": \($0)" } ?? ""
        func make(_ code: MQTTError.Code, _ text: String) -> MQTTError {
            MQTTError(code, "\(operation): \(text)\(suffix)", underlyingCode: rc)
        }
        let libraryText = String(cString: mosquitto_strerror(rc))
        switch rc {
        case MOSQ_ERR_NOMEM.rawValue: return make(.outOfMemory, libraryText)
        case MOSQ_ERR_PROTOCOL.rawValue, MOSQ_ERR_MALFORMED_PACKET.rawValue, MOSQ_ERR_DUPLICATE_PROPERTY.rawValue,
            MOSQ_ERR_NOT_FOUND.rawValue:
            return make(.protocolError, libraryText)
        case MOSQ_ERR_INVAL.rawValue: return make(.invalidConfiguration, "invalid argument")
        case MOSQ_ERR_NO_CONN.rawValue: return make(.noConnection, "not connected to the broker")
        case MOSQ_ERR_CONN_REFUSED.rawValue: return make(.connectionRefused, "the broker refused the connection")
        case MOSQ_ERR_CONN_LOST.rawValue: return make(.connectionLost, "the connection to the broker was lost")
        case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_TLS_HANDSHAKE.rawValue, MOSQ_ERR_OCSP.rawValue:
            return make(.tlsFailure, "TLS failure")
        case MOSQ_ERR_PAYLOAD_SIZE.rawValue, MOSQ_ERR_OVERSIZE_PACKET.rawValue:
            return make(.payloadTooLarge, "the message is larger than the broker accepts")
        case MOSQ_ERR_NOT_SUPPORTED.rawValue: return make(.unsupported, libraryText)
        case MOSQ_ERR_AUTH.rawValue: return make(.badCredentials, "authentication failed")
        case MOSQ_ERR_ACL_DENIED.rawValue: return make(.notAuthorized, "access denied")
        case MOSQ_ERR_KEEPALIVE.rawValue: return make(.timeout, "the broker did not answer within the keep-alive")
        case MOSQ_ERR_MALFORMED_UTF8.rawValue: return make(.invalidTopic, "the topic is not valid UTF-8")
        case MOSQ_ERR_QOS_NOT_SUPPORTED.rawValue: return make(.qosNotSupported, "the broker does not support this QoS")
        case MOSQ_ERR_PROXY.rawValue: return make(.unreachable, "proxy failure")
        case MOSQ_ERR_EAI.rawValue:
            return make(
                .dnsFailure, "cannot resolve the broker's host name (\(String(cString: gai_strerror(errnoValue))))")
        case MOSQ_ERR_ERRNO.rawValue:
            let text = String(cString: strerror(errnoValue))
            switch errnoValue {
            case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT, EADDRNOTAVAIL, EHOSTDOWN, ENETDOWN:
                return make(.unreachable, "cannot reach the broker (\(text))")
            case EPROTO: return make(.tlsFailure, "TLS failure (\(text))")
            case ECONNRESET, EPIPE, ECONNABORTED:
                return make(.connectionLost, "the connection to the broker was lost (\(text))")
            case 0: return make(.connectionLost, "the connection to the broker was closed")
            default: return make(.unknown, text)
            }
        default: return make(.unknown, libraryText)
        }
    }

    /// The broker's certificate was refused; `check` and `reason` come from ``MosquittoTLSVerifier``.
    static func certificateError(_ check: MQTTTLSCheck, reason: String, _ operation: String) -> MQTTError {
        MQTTError(
            .tlsFailure,
            "\(operation): TLS failure: certificate verify failed: \(check.summary) (OpenSSL: \(reason)); "
                + "fix: \(check.advice)",
            underlyingCode: MOSQ_ERR_TLS.rawValue, tlsCheck: check)
    }

    /// Maps a refusing CONNACK code (3.1.1: 1–5; MQTT 5: 0x80 and above).
    static func connackError(_ code: Int32, protocolVersion: MQTTProtocolVersion) -> MQTTError {
        let text: String
        let mapped: MQTTError.Code
        if protocolVersion == .v311 {
            text = String(cString: mosquitto_connack_string(code))
            switch code {
            case 1: mapped = .unsupported
            case 4: mapped = .badCredentials
            case 5: mapped = .notAuthorized
            default: mapped = .connectionRefused
            }
        } else {
            text = String(cString: mosquitto_reason_string(code))
            switch code {
            case 0x84: mapped = .unsupported
            case 0x86, 0x8C: mapped = .badCredentials
            case 0x87, 0x8A: mapped = .notAuthorized
            case 0x81, 0x82: mapped = .protocolError
            case 0x95: mapped = .payloadTooLarge
            default: mapped = .connectionRefused
            }
        }
        return MQTTError(mapped, "the broker refused the connection: \(text) (CONNACK \(code))", underlyingCode: code)
    }

    /// Maps an MQTT 5 failure reason code (0x80 and above) of a PUBACK/PUBREC/SUBACK.
    static func reasonError(_ code: Int32, _ operation: String) -> MQTTError {
        let text = String(cString: mosquitto_reason_string(code))
        let mapped: MQTTError.Code =
            switch code {
            case 0x87: .notAuthorized
            case 0x8F, 0x90: .invalidTopic
            case 0x95: .payloadTooLarge
            case 0x9B: .qosNotSupported
            default: .rejected
            }
        return MQTTError(
            mapped, "\(operation): the broker answered '\(text)' (reason code 0x\(String(code, radix: 16)))",
            underlyingCode: code)
    }
}
