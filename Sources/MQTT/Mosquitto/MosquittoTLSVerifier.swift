internal import CCrypto
internal import CMosquitto

/// Hands libmosquitto an OpenSSL context whose certificate check says which check failed.
///
/// libmosquitto logs every refused certificate as `certificate verify failed`. The context made here
/// replaces OpenSSL's call of `X509_verify_cert` with a callback that makes the same call and, when
/// it fails, records OpenSSL's verify error in the attempt (``MosquittoCallbackContext/Attempt``).
/// libmosquitto still applies its settings to the context (`MOSQ_OPT_SSL_CTX_WITH_DEFAULTS`: CA
/// file or system store, client certificate, `SSL_VERIFY_PEER`).
///
/// The host name is checked by OpenSSL (`X509_VERIFY_PARAM_set1_host` / `_set1_ip_asc`, so a
/// mismatch has its own verify error) instead of libmosquitto's verify callback, which this callback
/// replaces for the chain it checks: with a caller's context libmosquitto 2.0.11 never registers the
/// SSL ex-data index that callback needs to find its client, so it refuses every certificate (seen:
/// a valid broker refused with `host name verification failed`).
enum MosquittoTLSVerifier {
    /// Installs the context on `mosq`; call before the first connect. `host`: the name or address
    /// the broker's certificate must carry; nil skips the host-name check (`tls.insecure`).
    static func install(on mosq: OpaquePointer, context: MosquittoCallbackContext, host: String?) throws(MQTTError) {
        guard let sslContext = SSL_CTX_new(TLS_client_method()) else {
            throw MQTTError(.tlsFailure, "setting up TLS: OpenSSL could not create a TLS context")
        }
        // libmosquitto takes its own reference (SSL_CTX_up_ref) and frees it in mosquitto_destroy.
        defer { SSL_CTX_free(sslContext) }
        // Unretained: MosquittoHandle keeps the context alive until after mosquitto_destroy, which
        // frees this SSL context, so no handshake can outlive it.
        context.tlsHost.withLock { $0 = host }
        let userData = Unmanaged.passUnretained(context).toOpaque()
        SSL_CTX_set_cert_verify_callback(
            sslContext,
            { storeContext, userData in
                guard let userData else { return 0 }
                let context = Unmanaged<MosquittoCallbackContext>.fromOpaque(userData).takeUnretainedValue()
                // OpenSSL's own verdict at every depth, instead of libmosquitto's callback (see above).
                X509_STORE_CTX_set_verify_cb(storeContext) { preverified, _ in preverified }
                if let host = context.tlsHost.withLock({ $0 }) {
                    let parameters = X509_STORE_CTX_get0_param(storeContext)
                    if X509_VERIFY_PARAM_set1_ip_asc(parameters, host) != 1 {
                        guard X509_VERIFY_PARAM_set1_host(parameters, host, 0) == 1 else { return 0 }
                    }
                }
                let verdict = X509_verify_cert(storeContext)
                if verdict <= 0 {
                    let refusal = MosquittoTLSVerifier.refusal(x509Error: X509_STORE_CTX_get_error(storeContext))
                    context.attempt.withLock { $0.certificateRefusal = refusal }
                }
                return verdict
            }, userData)
        try MosquittoResult.check(
            mosquitto_void_option(mosq, MOSQ_OPT_SSL_CTX, UnsafeMutableRawPointer(sslContext)), "setting up TLS")
        try MosquittoResult.check(
            mosquitto_int_option(mosq, MOSQ_OPT_SSL_CTX_WITH_DEFAULTS, 1), "setting up TLS")
    }

    /// Classifies an OpenSSL `X509_V_ERR_*` value.
    static func refusal(x509Error code: Int32) -> (check: MQTTTLSCheck, reason: String) {
        let check: MQTTTLSCheck
        switch code {
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH: check = .hostName
        case X509_V_ERR_CERT_HAS_EXPIRED: check = .expired
        case X509_V_ERR_CERT_NOT_YET_VALID: check = .notYetValid
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT: check = .selfSigned
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_CERT_UNTRUSTED,
            X509_V_ERR_CERT_SIGNATURE_FAILURE:
            check = .untrustedIssuer
        default: check = .other
        }
        return (check, String(cString: X509_verify_cert_error_string(Int(code))))
    }
}
