/// What a characteristic supports, as declared by its properties (and extended properties). BlueZ lists them as
/// the `Flags` strings of `org.bluez.GattCharacteristic1`; `init(bluezFlags:)` and `bluezFlags` convert.
public struct CharacteristicProperties: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let broadcast = CharacteristicProperties(rawValue: 1 << 0)
    public static let read = CharacteristicProperties(rawValue: 1 << 1)
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 1 << 2)
    public static let write = CharacteristicProperties(rawValue: 1 << 3)
    public static let notify = CharacteristicProperties(rawValue: 1 << 4)
    public static let indicate = CharacteristicProperties(rawValue: 1 << 5)
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 1 << 6)
    public static let extendedProperties = CharacteristicProperties(rawValue: 1 << 7)
    public static let reliableWrite = CharacteristicProperties(rawValue: 1 << 8)
    public static let writableAuxiliaries = CharacteristicProperties(rawValue: 1 << 9)
    public static let encryptRead = CharacteristicProperties(rawValue: 1 << 10)
    public static let encryptWrite = CharacteristicProperties(rawValue: 1 << 11)
    public static let encryptAuthenticatedRead = CharacteristicProperties(rawValue: 1 << 12)
    public static let encryptAuthenticatedWrite = CharacteristicProperties(rawValue: 1 << 13)
    public static let secureRead = CharacteristicProperties(rawValue: 1 << 14)
    public static let secureWrite = CharacteristicProperties(rawValue: 1 << 15)
    public static let authorize = CharacteristicProperties(rawValue: 1 << 16)

    /// BlueZ's flag strings (`doc/gatt-api.txt`) in bit order.
    static let bluezNames: [(CharacteristicProperties, String)] = [
        (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"),
        (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
        (.authenticatedSignedWrites, "authenticated-signed-writes"), (.extendedProperties, "extended-properties"),
        (.reliableWrite, "reliable-write"), (.writableAuxiliaries, "writable-auxiliaries"),
        (.encryptRead, "encrypt-read"), (.encryptWrite, "encrypt-write"),
        (.encryptAuthenticatedRead, "encrypt-authenticated-read"),
        (.encryptAuthenticatedWrite, "encrypt-authenticated-write"), (.secureRead, "secure-read"),
        (.secureWrite, "secure-write"), (.authorize, "authorize"),
    ]

    /// Parses BlueZ's `Flags`; unknown strings are ignored (newer BlueZ versions add flags).
    public init(bluezFlags: some Sequence<String>) {
        var properties: CharacteristicProperties = []
        for flag in bluezFlags {
            if let match = Self.bluezNames.first(where: { $0.1 == flag }) { properties.insert(match.0) }
        }
        self = properties
    }

    /// BlueZ's `Flags` strings for these properties.
    public var bluezFlags: [String] {
        Self.bluezNames.filter { contains($0.0) }.map(\.1)
    }

    /// True when the characteristic can send values by itself (notify or indicate).
    public var canNotify: Bool { !isDisjoint(with: [.notify, .indicate]) }

    /// True when reads or writes need an encrypted (paired) link.
    public var requiresEncryption: Bool {
        !isDisjoint(with: [
            .encryptRead, .encryptWrite, .encryptAuthenticatedRead, .encryptAuthenticatedWrite, .secureRead,
            .secureWrite,
        ])
    }

    public var description: String { "[" + bluezFlags.joined(separator: ", ") + "]" }
}
