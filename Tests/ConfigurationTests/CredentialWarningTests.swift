import Configuration
import Foundation
import TestSupport
import Testing

/// Issue 19, D13: no warning for a password over plain mqtt://, nor for a world-readable password file.
@Suite struct CredentialWarningTests {
    static func load(_ json: String) throws -> BridgeConfiguration {
        try ConfigurationLoader().decode(Data(json.utf8))
    }

    @Test func aPasswordOverPlainMQTTToAnotherMachineIsWarnedAbout() throws {
        let plain = try Self.load(#"{"mqtt": {"url": "mqtt://broker.lan", "username": "u", "password_env": "P"}}"#)
        #expect(plain.warnings.contains { $0.contains("clear text") }, "\(plain.warnings)")
        let tls = try Self.load(#"{"mqtt": {"url": "mqtts://broker.lan", "username": "u", "password_env": "P"}}"#)
        #expect(!tls.warnings.contains { $0.contains("clear text") })
        let local = try Self.load(#"{"mqtt": {"url": "mqtt://127.0.0.1", "username": "u", "password_env": "P"}}"#)
        #expect(!local.warnings.contains { $0.contains("clear text") })
        let none = try Self.load(#"{"mqtt": {"url": "mqtt://broker.lan"}}"#)
        #expect(!none.warnings.contains { $0.contains("clear text") })
    }

    @Test func aPasswordFileOthersCanReadIsWarnedAbout() throws {
        let directory = try TemporaryDirectory(prefix: "credentials")
        let file = try directory.write("password", "secret\n")
        let json = #"{"mqtt": {"url": "mqtts://broker.lan", "username": "u", "password_file": "\#(file.path)"}}"#
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        #expect(try Self.load(json).warnings.contains { $0.contains("can be read by every user (mode 644)") })
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let warnings = try Self.load(json).warnings
        #expect(!warnings.contains { $0.contains("password_file") }, "\(warnings)")
    }
}
