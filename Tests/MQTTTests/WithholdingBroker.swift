import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback peer that speaks just enough MQTT 5 for one client: CONNACK for its CONNECT, PINGRESP
/// for its pings, and nothing for its publishes, whose topics it records in order.
final class WithholdingBroker: Sendable {
    let port: UInt16
    private let listener: Int32
    /// Whether `listener` is still open. It is closed under this lock, so `close()` never shuts down
    /// a descriptor number that was closed and handed to another socket (of another test) since.
    private let listening = Mutex(true)
    private let received = Mutex<[String]>([])

    /// The topics of the publishes received, in order.
    var topics: [String] { received.withLock { $0 } }

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socket in
                bind(fd, socket, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, socket, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            if fd >= 0 { Glibc.close(fd) }
            throw POSIXError(.EADDRNOTAVAIL)
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Stops accepting (the connection ends when the client disconnects).
    func close() {
        listening.withLock { open in
            if open { shutdown(listener, Int32(SHUT_RDWR)) }
        }
    }

    private func serve() {
        let connection = accept(listener, nil, nil)
        listening.withLock { open in
            open = false
            Glibc.close(listener)
        }
        guard connection >= 0 else { return }
        defer { Glibc.close(connection) }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            pending += chunk[0..<count]
            while let (type, body, used) = Self.packet(in: pending) {
                pending.removeFirst(used)
                switch type {
                case 1: write(connection, [0x20, 0x03, 0x00, 0x00, 0x00])  // CONNACK: accepted, no properties
                case 3: received.withLock { $0.append(Self.topic(of: body)) }
                case 12: write(connection, [0xD0, 0x00])  // PINGRESP
                case 14: return  // DISCONNECT
                default: break
                }
            }
        }
    }

    private func write(_ connection: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.write(connection, $0.baseAddress, $0.count) }
    }

    /// The first whole packet of `bytes`: its type, its body and how many bytes it took.
    private static func packet(in bytes: [UInt8]) -> (type: UInt8, body: ArraySlice<UInt8>, used: Int)? {
        guard let first = bytes.first else { return nil }
        var length = 0
        var shift = 0
        var index = 1
        while true {
            guard index < bytes.count, index <= 4 else { return nil }
            let byte = bytes[index]
            length |= Int(byte & 0x7F) << shift
            shift += 7
            index += 1
            if byte & 0x80 == 0 { break }
        }
        guard bytes.count >= index + length else { return nil }
        return (first >> 4, bytes[index..<(index + length)], index + length)
    }

    /// A PUBLISH body starts with the topic: a 2-byte length, then UTF-8.
    private static func topic(of body: ArraySlice<UInt8>) -> String {
        guard body.count >= 2 else { return "" }
        let start = body.startIndex
        let length = Int(body[start]) << 8 | Int(body[start + 1])
        let end = min(body.endIndex, start + 2 + length)
        return String(decoding: body[(start + 2)..<end], as: UTF8.self)
    }
}
