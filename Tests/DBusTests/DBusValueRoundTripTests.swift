import DBus
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every type travels through a real bus between two connections and comes back equal: as
/// signal arguments (encode on one connection, decode on the other) and through a method that
/// echoes a variant (both directions through the server side too).
@Suite(.timeLimit(.minutes(1))) struct DBusValueRoundTripTests {
    static func nestedVariant(_ depth: Int) -> DBusValue {
        var value = DBusValue.string("core")
        for _ in 0..<depth { value = .variant(value) }
        return value
    }

    static let samples: [(String, DBusValue)] = [
        ("byte", .byte(0)), ("byte max", .byte(255)), ("true", .boolean(true)), ("false", .boolean(false)),
        ("int16", .int16(.min)), ("uint16", .uint16(.max)), ("int32", .int32(.min)), ("uint32", .uint32(.max)),
        ("int64", .int64(.min)), ("uint64", .uint64(.max)), ("double", .double(-.pi)),
        ("infinity", .double(.infinity)), ("negative zero", .double(-0.0)),
        ("empty string", .string("")), ("unicode", .string("héllo ✓ 🦀")),
        ("root path", .objectPath("/")), ("path", .objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01")),
        ("signature", .signature("a{sv}")), ("empty signature", .signature(.empty)),
        ("empty ay", .bytes([])), ("empty as", .strings([])),
        ("empty a{sv}", .properties([:])), ("empty a(ii)", .array(elementSignature: "(ii)", [])),
        ("empty aav", .array(elementSignature: "av", [])),
        ("ay", .bytes([0, 1, 2, 254, 255])),
        ("ay spelled as an array", .array(elementSignature: "y", [.byte(9), .byte(8)])),
        ("as", .strings(["a", "", "c"])),
        ("ao", .objectPaths(["/a", "/b/c"])),
        ("an", .array(elementSignature: "n", [.int16(-1), .int16(2)])),
        ("ad", .array(elementSignature: "d", [.double(1.5), .double(-2)])),
        ("ab", .array(elementSignature: "b", [.boolean(true), .boolean(false)])),
        ("a{sv}", .properties(["Name": .string("x"), "RSSI": .int16(-70), "Value": .bytes(Array(0..<20))])),
        (
            "a{yv}",
            .dictionary(
                keySignature: "y", valueSignature: "v", [DBusDictEntry(key: .byte(1), value: .variant(.uint32(2)))])
        ),
        (
            "a{ox}",
            .dictionary(
                keySignature: "o", valueSignature: "x", [DBusDictEntry(key: .objectPath("/p"), value: .int64(-5))])
        ),
        (
            "a{qay}",
            .dictionary(
                keySignature: "q", valueSignature: "ay", [DBusDictEntry(key: .uint16(0x004c), value: .bytes([2, 21]))])
        ),
        (
            "managed objects",
            .dictionary(
                keySignature: "o", valueSignature: "a{sa{sv}}",
                [
                    DBusDictEntry(
                        key: .objectPath("/org/bluez/hci0"),
                        value: .dictionary(
                            keySignature: "s", valueSignature: "a{sv}",
                            [
                                DBusDictEntry(
                                    key: .string("org.bluez.Adapter1"), value: .properties(["Powered": .boolean(true)]))
                            ]))
                ])
        ),
        ("struct", .structure([.int32(1), .string("two"), .structure([.bytes([3]), .variant(.double(4))])])),
        (
            "array of structs",
            .array(
                elementSignature: "(is)",
                [.structure([.int32(1), .string("a")]), .structure([.int32(2), .string("b")])])
        ),
        (
            "aav",
            .array(
                elementSignature: "av",
                [.array(elementSignature: "v", [.variant(.byte(1)), .variant(.strings(["x"]))])])
        ),
        ("variant of array of variants", .variant(.array(elementSignature: "v", [.variant(.variant(.int32(1)))]))),
        ("deeply nested variants", nestedVariant(60)),
        ("large ay", .bytes((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0) })),
        ("large as", .strings((0..<20_000).map { "item \($0)" })),
        (
            "large a{sv}",
            .properties(Dictionary(uniqueKeysWithValues: (0..<5_000).map { ("k\($0)", DBusValue.uint32(UInt32($0))) }))
        ),
    ]

    static let echo = DBusInterface(
        name: "io.blebridge.Echo1",
        methods: [DBusMethod(name: "Echo", inSignature: "v", outSignature: "v") { call in call.arguments }])

    @Test func everyTypeSurvivesASignal() async throws {
        try await withBus { bus in
            let emitter = try await bus.connect()
            let listener = try await bus.connect()
            let stream = try await listener.signals(
                matching: DBusMatchRule(sender: emitter.uniqueName, interface: "io.blebridge.RoundTrip1"))
            for (name, value) in Self.samples {
                try emitter.emitSignal(
                    path: "/", interface: "io.blebridge.RoundTrip1", name: "Value", arguments: [value])
                let received = try #require(await next(stream), "\(name)")
                #expect(received.arguments == [value], "\(name)")
                #expect(received.arguments.first?.signature == value.signature, "\(name)")
            }
            // Several arguments of different types in one message keep their order.
            let all = Self.samples.prefix(20).map(\.1)
            try emitter.emitSignal(path: "/", interface: "io.blebridge.RoundTrip1", name: "Many", arguments: all)
            #expect(try #require(await next(stream)).arguments == Array(all))
        }
    }

    @Test func everyTypeSurvivesAMethodCallBothWays() async throws {
        try await withBus { bus in
            let server = try await bus.connect()
            try await server.export(path: "/echo", interfaces: [Self.echo])
            let client = try await bus.connect()
            for (name, value) in Self.samples {
                let reply = try await client.call(
                    destination: server.uniqueName, path: "/echo", interface: "io.blebridge.Echo1", method: "Echo",
                    arguments: [.variant(value)])
                #expect(reply == [.variant(value)], "\(name)")
            }
        }
    }

    @Test func fileDescriptorsTravelAndStayUsable() async throws {
        try await withBus { bus in
            let server = try await bus.connect()
            try await server.export(path: "/echo", interfaces: [Self.echo])
            let client = try await bus.connect()
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            let writeEnd = DBusFileDescriptor(takingOwnershipOf: ends[1])
            let readEnd = DBusFileDescriptor(takingOwnershipOf: ends[0])
            let value = DBusValue.structure([.unixFD(writeEnd), .array(elementSignature: "h", [.unixFD(writeEnd)])])
            let reply = try await client.call(
                destination: server.uniqueName, path: "/echo", interface: "io.blebridge.Echo1", method: "Echo",
                arguments: [.variant(value)])
            let members = try #require(reply.first?.unwrappedVariant.asStructure)
            let echoed = try #require(members.first?.asFileDescriptor)
            #expect(echoed.rawValue != writeEnd.rawValue)  // a new descriptor for the same pipe
            #expect(write(echoed.rawValue, "ok", 2) == 2)
            var buffer = [UInt8](repeating: 0, count: 4)
            #expect(read(readEnd.rawValue, &buffer, 4) == 2)
            #expect(Array(buffer.prefix(2)) == Array("ok".utf8))
            let copy = try echoed.duplicate()
            #expect(copy >= 0)
            close(copy)
        }
    }

    @Test func typedDecodingReportsExpectedAndActualSignatures() throws {
        let properties = DBusValue.properties(["Name": .string("lamp"), "RSSI": .int16(-40)])
        let decoded = try properties.decode(as: [String: DBusValue].self)
        #expect(try decoded["RSSI"]?.decode(as: Int16.self) == -40)
        #expect(try DBusValue.variant(.bytes([1, 2])).decode(as: [UInt8].self) == [1, 2])
        #expect(try DBusValue.strings(["a"]).decode(as: [String].self) == ["a"])
        let manufacturerData: [UInt16: [UInt8]] = [76: [1]]
        #expect(manufacturerData.dbusValue.signature == "a{qay}")
        let error = expectThrows(DBusError.self) { try DBusValue.string("x").decode(as: UInt16.self) }
        #expect(error?.name == .invalidArgs)
        #expect(error?.message.contains("expected signature 'q', got 's'") == true)
        let argument = expectThrows(DBusError.self) { try [DBusValue.int32(1)].decode(1, as: String.self) }
        #expect(argument?.message.contains("argument 1 missing") == true)
    }

    @Test func byteArraysCompareAndHashAlikeInBothSpellings() {
        let compact = DBusValue.bytes([1, 2, 3])
        let spelled = DBusValue.array(elementSignature: "y", [.byte(1), .byte(2), .byte(3)])
        #expect(compact == spelled)
        #expect(spelled == compact)
        #expect(Set([compact, spelled]).count == 1)
        #expect(compact.signature == spelled.signature)
        #expect(compact != .bytes([1, 2]))
        #expect(compact != .array(elementSignature: "n", [.int16(1), .int16(2), .int16(3)]))
        #expect(spelled.asBytes == [1, 2, 3])
        #expect(compact.asArray == [.byte(1), .byte(2), .byte(3)])
        #expect(DBusValue.variant(compact).hasSignature("v"))
        #expect(compact.hasSignature("ay"))
        #expect(!compact.hasSignature("as"))
    }

    @Test func invalidValuesAreRejectedBeforeSending() async throws {
        try await withBus { bus in
            let connection = try await bus.connect()
            func emit(_ value: DBusValue) throws {
                try connection.emitSignal(path: "/", interface: "io.blebridge.Bad1", name: "Bad", arguments: [value])
            }
            let mixed = expectThrows(DBusError.self) {
                try emit(.array(elementSignature: "s", [.string("a"), .int32(1)]))
            }
            #expect(mixed?.name == .invalidArgs)
            #expect(throws: DBusError.self) { try emit(.string("nul\u{0}inside")) }
            #expect(throws: DBusError.self) { try emit(.structure([])) }
            #expect(throws: DBusError.self) {
                try emit(.dictionary(keySignature: "v", valueSignature: "s", []))
            }
            // do/catch, not expectThrows: built by 6.3.1, expectThrows returned the NUL-string error
            // of an earlier emit instead of this one's (2 runs of 2); unexplained, see the commit.
            do {
                try emit(Self.nestedVariant(70))
                Issue.record("70 nested variants were accepted")
            } catch {
                #expect((error as? DBusError)?.message.contains("nested") == true, "\(error)")
            }
            let badPath = "/trailing/"
            let badSignature = "a{vs}"
            #expect(throws: DBusError.self) { try DBusObjectPath(badPath) }
            #expect(throws: DBusError.self) { try DBusSignature(badSignature) }
            #expect(DBusSignature(validating: "(i)a{s(ai)}") != nil)
            #expect(DBusSignature(validating: "()") == nil)
            // The connection still works.
            let names = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: "ListNames")
            #expect(names.first?.asStrings?.contains(connection.uniqueName) == true)
        }
    }
}
