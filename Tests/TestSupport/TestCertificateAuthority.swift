import Foundation

/// A throw-away certificate authority made with the `openssl` command, for TLS tests.
///
/// EC P-256 keys (fast to generate); certificates valid for two days; files in `directory`,
/// readable by everyone so a broker that drops root privileges can still read them.
package struct TestCertificateAuthority: Sendable {
    package let directory: TemporaryDirectory
    package let name: String
    package var certificateFile: String { directory.file("\(name).crt").path }
    package var keyFile: String { directory.file("\(name).key").path }

    /// Creates a self-signed CA called `name`.
    package init(name: String = "ca", directory: TemporaryDirectory? = nil) async throws {
        self.directory = try directory ?? TemporaryDirectory(prefix: "test-ca")
        self.name = name
        try await Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", keyFile, "-out", certificateFile, "-days", "2", "-subj", "/CN=BLEBridge test CA \(name)",
        ])
        try Self.makeReadable(keyFile)
    }

    /// Issues a certificate signed by this CA; `subjectAltName` like `IP:127.0.0.1` or
    /// `DNS:localhost`. Returns the certificate and key file paths.
    package func issue(_ leaf: String, subjectAltName: String) async throws -> (certificate: String, key: String) {
        let (request, key, extensions) = try await makeRequest(leaf, subjectAltName: subjectAltName)
        let certificate = directory.file("\(leaf).crt").path
        try await Self.openssl([
            "x509", "-req", "-in", request, "-CA", certificateFile, "-CAkey", keyFile, "-CAcreateserial", "-out",
            certificate, "-days", "2", "-extfile", extensions,
        ])
        return (certificate, key)
    }

    /// Like ``issue(_:subjectAltName:)``, but valid only on 1 January 2020: expired.
    package func issueExpired(_ leaf: String, subjectAltName: String) async throws -> (certificate: String, key: String)
    {
        try await issue(leaf, subjectAltName: subjectAltName, from: "20200101000000Z", until: "20200102000000Z")
    }

    /// Like ``issue(_:subjectAltName:)``, but valid only from 1 January 2099: not yet valid.
    package func issueNotYetValid(_ leaf: String, subjectAltName: String) async throws -> (
        certificate: String, key: String
    ) {
        try await issue(leaf, subjectAltName: subjectAltName, from: "20990101000000Z", until: "20990102000000Z")
    }

    /// A certificate valid from `start` to `end` (`YYYYMMDDHHMMSSZ`). `openssl x509` (OpenSSL 3.0)
    /// cannot set either date, so this signs with `openssl ca` and a minimal configuration.
    private func issue(_ leaf: String, subjectAltName: String, from start: String, until end: String) async throws
        -> (certificate: String, key: String)
    {
        let (request, key, extensions) = try await makeRequest(leaf, subjectAltName: subjectAltName)
        let certificate = directory.file("\(leaf).crt").path
        let database = try directory.write("\(leaf).index", "").path
        let serial = try directory.write("\(leaf).serial", "01\n").path
        let configuration = try directory.write(
            "\(leaf).cnf",
            """
            [ca]
            default_ca = signing
            [signing]
            database = \(database)
            new_certs_dir = \(directory.url.path)
            serial = \(serial)
            default_md = sha256
            policy = anything
            [anything]
            commonName = supplied

            """
        ).path
        try await Self.openssl([
            "ca", "-batch", "-notext", "-config", configuration, "-in", request, "-out", certificate, "-cert",
            certificateFile, "-keyfile", keyFile, "-startdate", start, "-enddate", end,
            "-extfile", extensions,
        ])
        return (certificate, key)
    }

    /// A key and certificate request for `leaf` (CN = `leaf`), and its extensions file.
    private func makeRequest(_ leaf: String, subjectAltName: String) async throws -> (
        request: String, key: String, extensions: String
    ) {
        let key = directory.file("\(leaf).key").path
        let request = directory.file("\(leaf).csr").path
        let extensions = try directory.write("\(leaf).ext", "subjectAltName=\(subjectAltName)\n").path
        try await Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out",
            request, "-subj", "/CN=\(leaf)",
        ])
        try Self.makeReadable(key)
        return (request, key, extensions)
    }

    private static func openssl(_ arguments: [String]) async throws {
        let result = try await ChildProcess.run("openssl", arguments, timeout: .seconds(30))
        guard result.status == 0 else {
            throw FixtureError("openssl \(arguments.first ?? "") failed: \(result.stderr)")
        }
    }

    private static func makeReadable(_ path: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
    }
}
