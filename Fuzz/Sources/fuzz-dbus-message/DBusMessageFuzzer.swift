import DBus
import FuzzSupport

/// The D-Bus message decoder (libdbus's validation, then `MessageDecoder`, as for every message
/// a connection receives). The input is a body signature, a NUL and a body: the harness wraps
/// them in a valid signal header (big-endian for inputs of odd length, little-endian otherwise, so
/// both byte orders are reached), so libFuzzer spends its time in the values rather than in the
/// fixed header.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDBusMessage(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (signature, body) = FuzzInput(data, size).splitAtNUL
    guard signature.count <= 255 else { return 0 }
    let message = SignalBytes(bigEndian: size % 2 == 1, signature: signature, body: body).bytes
    do {
        for value in try DBusWireMessage.arguments(of: message) { _ = String(describing: value) }
    } catch {
        _ = error.description
    }
    return 0
}

/// A signal `/f f.z.m` in wire format around a given body.
struct SignalBytes {
    private(set) var bytes: [UInt8] = []
    private let bigEndian: Bool

    init(bigEndian: Bool, signature: [UInt8], body: [UInt8]) {
        self.bigEndian = bigEndian
        bytes = [bigEndian ? UInt8(ascii: "B") : UInt8(ascii: "l"), 4, 0, 1]
        uint32(UInt32(body.count))
        uint32(1)  // serial
        let lengthAt = bytes.count
        uint32(0)  // header fields array length, patched below
        let start = bytes.count
        field(1, UInt8(ascii: "o"), Array("/f".utf8))
        field(2, UInt8(ascii: "s"), Array("f.z".utf8))
        field(3, UInt8(ascii: "s"), Array("m".utf8))
        if !signature.isEmpty {
            pad(to: 8)
            bytes += [8, 1, UInt8(ascii: "g"), 0, UInt8(signature.count)] + signature + [0]
        }
        let length = UInt32(bytes.count - start)
        let lengthBytes = bigEndian ? length.bigEndian : length.littleEndian
        withUnsafeBytes(of: lengthBytes) { bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0) }
        pad(to: 8)
        bytes += body
    }

    private mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    private mutating func uint32(_ value: UInt32) {
        pad(to: 4)
        withUnsafeBytes(of: bigEndian ? value.bigEndian : value.littleEndian) { bytes += $0 }
    }

    private mutating func field(_ code: UInt8, _ type: UInt8, _ text: [UInt8]) {
        pad(to: 8)
        bytes += [code, 1, type, 0]
        uint32(UInt32(text.count))
        bytes += text + [0]
    }
}
