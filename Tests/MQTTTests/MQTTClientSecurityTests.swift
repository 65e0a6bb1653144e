import Foundation
import MQTT
import TestSupport
import Testing

/// TLS (test CA made by openssl) and user name/password (mosquitto password file).
@Suite struct MQTTClientSecurityTests {
    /// A broker with a TLS listener whose certificate is for 127.0.0.1, signed by `authority`.
    private func tlsBroker(
        _ authority: TestCertificateAuthority, subjectAltName: String = "IP:127.0.0.1",
        requireClientCertificate: Bool = false
    ) async throws -> MosquittoFixture {
        try await tlsBroker(
            authority, server: authority.issue("server", subjectAltName: subjectAltName),
            requireClientCertificate: requireClientCertificate)
    }

    /// A broker with a TLS listener presenting `server`; `authority` is its CA for client certificates.
    private func tlsBroker(
        _ authority: TestCertificateAuthority, server: (certificate: String, key: String),
        requireClientCertificate: Bool = false
    ) async throws -> MosquittoFixture {
        try await MosquittoFixture(
            listener: """
                listener {port} 127.0.0.1
                allow_anonymous true
                cafile \(authority.certificateFile)
                certfile \(server.certificate)
                keyfile \(server.key)
                require_certificate \(requireClientCertificate)
                """)
    }

    private func tlsConfiguration(_ broker: MosquittoFixture, tls: MQTTTLSConfiguration) throws -> MQTTConfiguration {
        try MQTTConfiguration(
            url: "mqtts://127.0.0.1:\(broker.port)", clientID: "tls", tls: tls,
            minimumReconnectDelay: .milliseconds(50),
            connectTimeout: .seconds(5))
    }

    @Test func tlsClientVerifiesTheBrokerAgainstTheGivenCA() async throws {
        let authority = try await TestCertificateAuthority()
        let broker = try await tlsBroker(authority)
        let client = MQTTClient(
            configuration: try tlsConfiguration(broker, tls: MQTTTLSConfiguration(caFile: authority.certificateFile)))
        try await client.connect()
        let stream = try await client.subscribe("secure/#")
        try await client.publish(MQTTMessage(topic: "secure/1", text: "over TLS", qos: .exactlyOnce))
        #expect(await MQTTTestHelpers.collect(stream, count: 1).map(\.text) == ["over TLS"])
        await client.disconnect()
    }

    @Test func brokerSignedByAnotherCAIsRejectedWithAClearTLSError() async throws {
        let authority = try await TestCertificateAuthority(name: "real")
        let stranger = try await TestCertificateAuthority(name: "stranger")
        let broker = try await tlsBroker(authority)
        let client = MQTTClient(
            configuration: try tlsConfiguration(broker, tls: MQTTTLSConfiguration(caFile: stranger.certificateFile)))
        await #expect {
            try await client.connect()
        } throws: { error in
            let error = error as? MQTTError
            return error?.code == .tlsFailure && error?.message.contains("certificate verify failed") == true
        }
        // Without a CA file the system store is used, which does not know the test CA either.
        let systemCAs = MQTTClient(
            configuration: try MQTTConfiguration(url: "mqtts://127.0.0.1:\(broker.port)", clientID: "system-cas"))
        await #expect {
            try await systemCAs.connect()
        } throws: { ($0 as? MQTTError)?.code == .tlsFailure }
    }

    /// Issue 19 (D13): every refusal used to read only `certificate verify failed`. Each broker
    /// here presents a certificate that fails one check; the error names that check (a code to
    /// catch, ``MQTTError/tlsCheck``) and the setting to fix.
    @Test func eachCertificateRefusalNamesTheCheckThatFailed() async throws {
        let authority = try await TestCertificateAuthority(name: "trusted")
        let stranger = try await TestCertificateAuthority(name: "stranger")
        let cases: [(server: (certificate: String, key: String), check: MQTTTLSCheck, names: [String])] = [
            (
                try await authority.issue("wrong-host", subjectAltName: "DNS:broker.example"), .hostName,
                ["host name mismatch", "mqtt.url", "subjectAltName"]
            ),
            (
                try await authority.issueExpired("expired", subjectAltName: "IP:127.0.0.1"), .expired,
                ["has expired", "renew the broker's certificate"]
            ),
            (
                try await authority.issueNotYetValid("not-yet-valid", subjectAltName: "IP:127.0.0.1"), .notYetValid,
                ["is not yet valid", "check this machine's clock"]
            ),
            (
                try await stranger.issue("foreign", subjectAltName: "IP:127.0.0.1"), .untrustedIssuer,
                ["unknown issuer", "mqtt.tls.ca_file"]
            ),
            ((stranger.certificateFile, stranger.keyFile), .selfSigned, ["self-signed", "mqtt.tls.ca_file"]),
        ]
        for (server, check, names) in cases {
            let broker = try await tlsBroker(authority, server: server)
            let client = MQTTClient(
                configuration: try tlsConfiguration(
                    broker, tls: MQTTTLSConfiguration(caFile: authority.certificateFile)))
            var refusal: MQTTError?
            do { try await client.connect() } catch { refusal = error as? MQTTError }
            #expect(refusal?.code == .tlsFailure, "\(check): \(String(describing: refusal))")
            #expect(refusal?.tlsCheck == check, "\(check): \(String(describing: refusal))")
            for name in names {
                #expect(
                    refusal?.message.contains(name) == true, "\(check): '\(name)' in \(String(describing: refusal))")
            }
        }
    }

    @Test func hostNameMismatchFailsUnlessInsecureIsAskedFor() async throws {
        let authority = try await TestCertificateAuthority()
        let broker = try await tlsBroker(authority, subjectAltName: "DNS:broker.example")
        let strict = MQTTClient(
            configuration: try tlsConfiguration(broker, tls: MQTTTLSConfiguration(caFile: authority.certificateFile)))
        await #expect {
            try await strict.connect()
        } throws: { ($0 as? MQTTError)?.code == .tlsFailure }
        let insecure = MQTTClient(
            configuration: try tlsConfiguration(
                broker, tls: MQTTTLSConfiguration(caFile: authority.certificateFile, insecure: true)))
        try await insecure.connect()
        await insecure.disconnect()
    }

    @Test func clientCertificateIsPresentedWhenTheBrokerRequiresOne() async throws {
        let authority = try await TestCertificateAuthority()
        let broker = try await tlsBroker(authority, requireClientCertificate: true)
        let identity = try await authority.issue("gateway", subjectAltName: "DNS:gateway")
        let withCertificate = MQTTClient(
            configuration: try tlsConfiguration(
                broker,
                tls: MQTTTLSConfiguration(
                    caFile: authority.certificateFile, certificateFile: identity.certificate, keyFile: identity.key)))
        try await withCertificate.connect()
        await withCertificate.disconnect()
        let without = MQTTClient(
            configuration: try tlsConfiguration(broker, tls: MQTTTLSConfiguration(caFile: authority.certificateFile)))
        await #expect {
            try await without.connect()
        } throws: { ($0 as? MQTTError)?.code == .tlsFailure }
    }

    /// A broker that only admits `alice` with the password `wonderland` (mosquitto_passwd).
    private func passwordBroker() async throws -> MosquittoFixture {
        let directory = try TemporaryDirectory(prefix: "mqtt-passwd")
        let file = directory.file("passwd").path
        let made = try await ChildProcess.run("mosquitto_passwd", ["-c", "-b", file, "alice", "wonderland"])
        #expect(made.status == 0, "\(made.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        return try await MosquittoFixture(
            listener: "listener {port} 127.0.0.1\nallow_anonymous false\npassword_file \(file)")
    }

    private func credentials(
        _ broker: MosquittoFixture, username: String?, password: MQTTSecret?, version: MQTTProtocolVersion = .v5
    ) throws -> MQTTConfiguration {
        try MQTTConfiguration(
            url: broker.url, clientID: "auth", protocolVersion: version, username: username, password: password,
            connectTimeout: .seconds(5))
    }

    @Test func passwordFromAFileOrTheEnvironmentIsAccepted() async throws {
        let broker = try await passwordBroker()
        let directory = try TemporaryDirectory(prefix: "mqtt-secret")
        let file = try directory.write("password", "wonderland\n").path
        let fromFile = MQTTClient(configuration: try credentials(broker, username: "alice", password: .file(file)))
        try await fromFile.connect()
        await fromFile.disconnect()
        setenv("BLEBRIDGE_TEST_ALICE_PASSWORD", "wonderland", 1)
        let fromEnvironment = MQTTClient(
            configuration: try credentials(
                broker, username: "alice", password: .environment("BLEBRIDGE_TEST_ALICE_PASSWORD"), version: .v311))
        try await fromEnvironment.connect()
        await fromEnvironment.disconnect()
    }

    @Test func wrongPasswordAndAnonymousAreRefused() async throws {
        let broker = try await passwordBroker()
        let wrong = MQTTClient(configuration: try credentials(broker, username: "alice", password: .value("rabbit")))
        await #expect {
            try await wrong.connect()
        } throws: { error in
            let error = error as? MQTTError
            // mosquitto 2.0 answers 0x87 (not authorized) rather than 0x86 (bad user name or password).
            // The message names the refusal and never the password.
            return [MQTTError.Code.badCredentials, .notAuthorized].contains(error?.code)
                && error?.message.contains("rabbit") == false
        }
        let wrongOld = MQTTClient(
            configuration: try credentials(broker, username: "alice", password: .value("rabbit"), version: .v311))
        await #expect {
            try await wrongOld.connect()
        } throws: { [MQTTError.Code.badCredentials, .notAuthorized].contains(($0 as? MQTTError)?.code) }
        let anonymous = MQTTClient(configuration: try credentials(broker, username: nil, password: nil))
        await #expect {
            try await anonymous.connect()
        } throws: { [MQTTError.Code.badCredentials, .notAuthorized].contains(($0 as? MQTTError)?.code) }
    }
}
