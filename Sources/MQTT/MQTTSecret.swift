#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a password comes from. Its description never shows the secret.
///
/// File and environment sources are read on the client's network thread before every
/// connection attempt, so a rotated password is picked up on the next reconnect. A file's
/// trailing newline is removed.
package enum MQTTSecret: Sendable, Hashable, CustomStringConvertible {
    case value(String)
    /// A file holding the password (config `password_file`).
    case file(String)
    /// An environment variable holding the password (config `password_env`).
    case environment(String)

    package var description: String {
        switch self {
        case .value: "<password>"
        case .file(let path): "<password from file \(path)>"
        case .environment(let name): "<password from $\(name)>"
        }
    }

    /// The password; throws ``MQTTError/Code/invalidConfiguration`` when the source is unusable.
    func resolve() throws(MQTTError) -> String {
        switch self {
        case .value(let password):
            return password
        case .environment(let name):
            guard let raw = getenv(name) else {
                throw MQTTError(.invalidConfiguration, "password environment variable \(name) is not set")
            }
            return String(cString: raw)
        case .file(let path):
            guard let file = fopen(path, "rb") else {
                let reason = String(cString: strerror(errno))
                throw MQTTError(.invalidConfiguration, "cannot read password file \(path): \(reason)")
            }
            defer { fclose(file) }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = fread(&buffer, 1, buffer.count, file)
                if count == 0 { break }
                bytes += buffer[0..<count]
                if bytes.count > 65536 {
                    throw MQTTError(.invalidConfiguration, "password file \(path) is larger than 64 KiB")
                }
            }
            while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") {
                bytes.removeLast()
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
