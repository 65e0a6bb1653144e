import DBus
import TestSupport
import Testing

/// `DBusSignatureMismatch`: an exported object answers a wrong argument signature with
/// InvalidArgs (default) or, like bluetoothd's gdbus, with UnknownMethod and libdbus's text.
@Suite(.timeLimit(.minutes(1))) struct DBusSignatureMismatchTests {
    static let name = "io.blebridge.Mismatch"
    static let interface = "io.blebridge.Mismatch1"

    static func echo() -> DBusInterface {
        DBusInterface(
            name: interface,
            methods: [DBusMethod(name: "Echo", inSignature: "s", outSignature: "s") { call in [call.arguments[0]] }],
            properties: [DBusProperty(name: "Name", signature: "s") { .string("thing") }])
    }

    func call(
        _ client: DBusConnection, _ path: DBusObjectPath, _ interface: String, _ method: String,
        _ arguments: [DBusValue]
    ) async -> DBusError? {
        await expectThrows(DBusError.self) {
            try await client.call(
                destination: Self.name, path: path, interface: interface, method: method, arguments: arguments)
        }
    }

    @Test func eachObjectAnswersAWrongSignatureTheWayItWasExportedWith() async throws {
        try await withBus { bus in
            let server = try await bus.connect()
            #expect(try await server.requestName(Self.name) == .primaryOwner)
            try await server.addObjectManager(at: "/", signatureMismatch: .unknownMethod)
            try await server.export(path: "/gdbus", interfaces: [Self.echo()], signatureMismatch: .unknownMethod)
            try await server.export(DBusExportedObject(path: "/plain", interfaces: [Self.echo()]))
            let client = try await bus.connect()

            let gdbus = await call(client, "/gdbus", Self.interface, "Echo", [.uint32(1)])
            #expect(gdbus?.name == .unknownMethod)
            #expect(
                gdbus?.message
                    == "Method \"Echo\" with signature \"u\" on interface \"io.blebridge.Mismatch1\" doesn't exist\n")
            let plain = await call(client, "/plain", Self.interface, "Echo", [.uint32(1)])
            #expect(plain?.name == .invalidArgs)
            #expect(plain?.message == "Invalid arguments: expected signature 's', got 'u'")

            // The standard interfaces of the object follow the same choice.
            let properties = "org.freedesktop.DBus.Properties"
            let get = await call(client, "/gdbus", properties, "Get", [.string(Self.interface)])
            #expect(get?.name == .unknownMethod)
            #expect(
                get?.message
                    == "Method \"Get\" with signature \"s\" on interface \"org.freedesktop.DBus.Properties\" doesn't exist\n"
            )
            #expect(await call(client, "/plain", properties, "Get", [.string(Self.interface)])?.name == .invalidArgs)
            // Introspect is the exception, as in libdbus: it answers with the child nodes only.
            let children = try await client.call(
                destination: Self.name, path: "/", interface: "org.freedesktop.DBus.Introspectable",
                method: "Introspect", arguments: [.string("x")])
            #expect(
                children == [
                    .string(
                        "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
                            + "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n"
                            + "<node>\n  <node name=\"gdbus\"/>\n  <node name=\"plain\"/>\n</node>\n")
                ])
            let plainIntrospect = await call(
                client, "/plain", "org.freedesktop.DBus.Introspectable", "Introspect", [.string("x")])
            #expect(plainIntrospect?.name == .invalidArgs)
            let managed = await call(client, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", [.byte(1)])
            #expect(managed?.name == .unknownMethod)

            // Right signatures are served as before.
            let reply = try await client.call(
                destination: Self.name, path: "/gdbus", interface: Self.interface, method: "Echo",
                arguments: [.string("ok")])
            #expect(reply == [.string("ok")])
            server.close()
            client.close()
        }
    }

    @Test func anObjectKeepsOneWayUntilItIsGone() async throws {
        try await withBus { bus in
            let server = try await bus.connect()
            try await server.export(path: "/thing", interfaces: [Self.echo()], signatureMismatch: .unknownMethod)
            let other = DBusInterface(name: "io.blebridge.Other1")
            let conflict = await expectThrows(DBusError.self) {
                try await server.export(path: "/thing", interfaces: [other])
            }
            #expect(conflict?.name == .invalidArgs)
            try await server.export(path: "/thing", interfaces: [other], signatureMismatch: .unknownMethod)
            try await server.unexport(path: "/thing")
            // Once the object is gone the path can be exported again the other way.
            try await server.export(path: "/thing", interfaces: [Self.echo()])
            server.close()
        }
    }
}
