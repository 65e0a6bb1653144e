#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes to standard output and standard error with `write(2)`, so output is not held in a
/// buffer when the process exits or is killed, and lines from several threads never interleave.
enum StandardStreams {
    static func out(_ text: String) {
        write(text, to: 1)
    }

    static func error(_ text: String) {
        write(text, to: 2)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                #if canImport(Glibc)
                    Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #else
                    Darwin.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #endif
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
