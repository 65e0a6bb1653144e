import Foundation

/// A throw-away certificate authority made with the `openssl` command, for TLS tests.
///
/// EC P-256 keys (fast to generate); certificates valid for two days; files in `directory`,
/// readable by everyone so a broker that drops root privileges can still read them.
public struct TestCertificateAuthority: Sendable {
    public let directory: TemporaryDirectory
    public let name: String
    public var certificateFile: String { directory.file("\(name).crt").path }
    public var keyFile: String { directory.file("\(name).key").path }

    /// Creates a self-signed CA called `name`.
    public init(name: String = "ca", directory: TemporaryDirectory? = nil) async throws {
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
    public func issue(_ leaf: String, subjectAltName: String) async throws -> (certificate: String, key: String) {
        let key = directory.file("\(leaf).key").path
        let request = directory.file("\(leaf).csr").path
        let certificate = directory.file("\(leaf).crt").path
        let extensions = try directory.write("\(leaf).ext", "subjectAltName=\(subjectAltName)\n").path
        try await Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out",
            request, "-subj", "/CN=\(leaf)",
        ])
        try await Self.openssl([
            "x509", "-req", "-in", request, "-CA", certificateFile, "-CAkey", keyFile, "-CAcreateserial", "-out",
            certificate, "-days", "2", "-extfile", extensions,
        ])
        try Self.makeReadable(key)
        return (certificate, key)
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
