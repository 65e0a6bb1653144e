import Foundation

/// Credentials that are valid but exposed (issue 19, D13).
extension MQTTSettings {
    /// A password sent in clear text to another machine, a password file others can read.
    package var credentialWarnings: [String] {
        var warnings: [String] = []
        let hasPassword = passwordFile != nil || passwordEnvironmentVariable != nil
        if hasPassword, !url.usesTLS, !Self.isLoopback(url.host) {
            warnings.append(
                "mqtt.url is plain mqtt:// to \(url.host) but a password is set: it crosses the network in clear text; "
                    + "use mqtts://")
        }
        if let passwordFile, let mode = Self.permissions(passwordFile), mode & 0o007 != 0 {
            warnings.append(
                "mqtt.password_file \(passwordFile) can be read by every user (mode \(String(mode, radix: 8))); "
                    + "chmod 600 it (or 640 with the group blebridge runs as)")
        }
        return warnings
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The permission bits of `path`, nil when it cannot be read.
    static func permissions(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }
}
