import Glibc
import Testing

@testable import MQTT

/// The error funnel: libmosquitto results, errno values and reason codes to catchable codes.
@Suite struct MosquittoResultTests {
    @Test func connackCodesNameTheProblem() {
        #expect(MosquittoResult.connackError(4, protocolVersion: .v311).code == .badCredentials)
        #expect(MosquittoResult.connackError(5, protocolVersion: .v311).code == .notAuthorized)
        #expect(MosquittoResult.connackError(3, protocolVersion: .v311).code == .connectionRefused)
        #expect(MosquittoResult.connackError(0x86, protocolVersion: .v5).code == .badCredentials)
        #expect(MosquittoResult.connackError(0x87, protocolVersion: .v5).code == .notAuthorized)
        #expect(
            MosquittoResult.connackError(0x86, protocolVersion: .v5).message.lowercased().contains(
                "bad user name or password"))
    }

    @Test func libraryResultsAndErrnoMapToCodes() {
        // 14 = MOSQ_ERR_ERRNO, 15 = MOSQ_ERR_EAI, 4 = MOSQ_ERR_NO_CONN, 9 = MOSQ_ERR_PAYLOAD_SIZE, 8 = MOSQ_ERR_TLS
        #expect(MosquittoResult.error(14, "connecting", errnoValue: ECONNREFUSED).code == .unreachable)
        #expect(MosquittoResult.error(14, "connecting", errnoValue: EPROTO).code == .tlsFailure)
        #expect(MosquittoResult.error(15, "connecting", errnoValue: EAI_NONAME).code == .dnsFailure)
        #expect(MosquittoResult.error(4, "publishing").code == .noConnection)
        #expect(MosquittoResult.error(9, "publishing").code == .payloadTooLarge)
        #expect(
            MosquittoResult.error(8, "connecting", detail: "certificate verify failed").message.hasSuffix(
                "certificate verify failed"))
    }

    @Test func failureReasonCodes() {
        #expect(MosquittoResult.reasonError(0x95, "publishing").code == .payloadTooLarge)
        #expect(MosquittoResult.reasonError(0x87, "publishing").code == .notAuthorized)
        #expect(MosquittoResult.reasonError(0x80, "publishing").code == .rejected)
    }

    /// OpenSSL verify errors (`X509_V_ERR_*`, stable numbers of its ABI) to the check users can catch.
    @Test func certificateRefusalsAreClassifiedByTheCheckThatFailed() {
        let expected: [Int32: MQTTTLSCheck] = [
            9: .notYetValid, 10: .expired, 18: .selfSigned, 19: .untrustedIssuer, 20: .untrustedIssuer,
            21: .untrustedIssuer, 62: .hostName, 64: .hostName, 23: .other,
        ]
        for (code, check) in expected {
            #expect(MosquittoTLSVerifier.refusal(x509Error: code).check == check, "X509_V_ERR \(code)")
        }
        let error = MosquittoResult.certificateError(.notYetValid, reason: "certificate is not yet valid", "connecting")
        #expect(error.code == .tlsFailure && error.tlsCheck == .notYetValid)
        #expect(error.message.contains("not yet valid") && error.message.contains("clock"))
    }
}
