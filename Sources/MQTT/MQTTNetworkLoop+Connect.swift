internal import CMosquitto
import Foundation

/// Setting up one attempt on the loop's thread: options set once per handle (protocol, TCP_NODELAY,
/// send maximum, TLS, will), credentials read afresh, and the blocking connect (DNS, TCP, TLS).
extension MQTTNetworkLoop {
    /// Options set once per handle: protocol, TCP_NODELAY, send maximum, TLS, will.
    func configureOnce() throws(MQTTError) {
        let mosq = handle.pointer
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try MosquittoResult.check(
            mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, version), "setting the protocol version")
        try MosquittoResult.check(mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1), "setting TCP_NODELAY")
        if let sendMaximum = configuration.sendMaximum {
            try MosquittoResult.check(
                mosquitto_int_option(mosq, MOSQ_OPT_SEND_MAXIMUM, Int32(sendMaximum)), "setting the send maximum")
        }
        if configuration.broker.usesTLS { try configureTLS(configuration.tls ?? MQTTTLSConfiguration()) }
        if let will = configuration.will {
            let properties = try MosquittoPropertyList(will.properties)
            let rc = will.payload.withUnsafeBytes {
                mosquitto_will_set_v5(
                    mosq, will.topic, Int32($0.count), $0.baseAddress, will.qos.rawValue, will.retain, properties.head)
            }
            try MosquittoResult.check(rc, "setting the last will on \(will.topic)")
            _ = properties.transferOwnership()  // libmosquitto owns the list after success
        }
    }

    func configureTLS(_ tls: MQTTTLSConfiguration) throws(MQTTError) {
        let mosq = handle.pointer
        for file in [tls.caFile, tls.certificateFile, tls.keyFile].compactMap({ $0 })
        where access(file, R_OK) != 0 {
            throw MQTTError(.tlsFailure, "TLS file \(file) is not readable: \(String(cString: strerror(errno)))")
        }
        if tls.caFile == nil {
            try MosquittoResult.check(
                mosquitto_int_option(mosq, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "using the system CA certificates")
        }
        try MosquittoTLSVerifier.install(
            on: mosq, context: context, host: tls.insecure ? nil : configuration.broker.host)
        let rc = mosquitto_tls_set(
            mosq, tls.caFile, tls.caFile == nil ? "/etc/ssl/certs" : nil, tls.certificateFile, tls.keyFile, nil)
        try MosquittoResult.check(rc, "setting up TLS", detail: context.attempt.withLock { $0.lastProblem })
        if tls.insecure {
            logger.warning("MQTT TLS host-name verification is OFF (tls.insecure); use only for tests")
            try MosquittoResult.check(mosquitto_tls_insecure_set(mosq, true), "disabling host-name verification")
        }
    }

    /// Reads the password (file or environment) afresh before every attempt; never logs it.
    func applyCredentials() throws(MQTTError) {
        guard let username = configuration.username else { return }
        let password = try configuration.password?.resolve()
        try MosquittoResult.check(
            mosquitto_username_pw_set(handle.pointer, username, password), "setting the user name and password")
    }

    func connectSocket(first: Bool) throws(MQTTError) {
        let mosq = handle.pointer
        let broker = configuration.broker
        let keepAlive = Int32(configuration.keepAlive.components.seconds)
        let rc: Int32
        var savedErrno: Int32 = 0
        if first {
            let properties = MosquittoPropertyList()
            if configuration.protocolVersion == .v5 && !configuration.cleanSession {
                try properties.addSessionExpiry(configuration.sessionExpiry)
            }
            if configuration.protocolVersion == .v5, let maximum = configuration.maximumPacketSize {
                try properties.addMaximumPacketSize(maximum)
            }
            rc = mosquitto_connect_bind_v5(mosq, broker.host, Int32(broker.port), keepAlive, nil, properties.head)
            savedErrno = errno
        } else {
            rc = mosquitto_reconnect(mosq)
            savedErrno = errno
        }
        if rc != MosquittoResult.success {
            if let refusal = context.attempt.withLock({ $0.certificateRefusal }) {
                throw MosquittoResult.certificateError(refusal.check, reason: refusal.reason, "connecting to \(broker)")
            }
            throw MosquittoResult.error(
                rc, "connecting to \(broker)", errnoValue: savedErrno,
                detail: context.attempt.withLock { $0.lastProblem })
        }
    }

}
