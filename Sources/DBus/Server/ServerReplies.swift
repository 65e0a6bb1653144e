/// The asynchronous halves of serving calls: running handlers and property accessors off the
/// connection thread, and sending their replies back through it.
enum ServerReplies {
    /// Runs `body` in a new task and replies with its result (unless no reply is expected).
    static func respond(
        to message: Message, loop: ConnectionLoop, outSignature: DBusSignature?, notice: DBusReplyNotice? = nil,
        _ body: @escaping @Sendable () async throws -> [DBusValue]
    ) {
        Task {
            let result: Result<[DBusValue], any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            send(result, to: message, loop: loop, outSignature: outSignature)
            notice?.markQueued()
        }
    }

    /// Sends a reply from any thread.
    static func send(
        _ result: Result<[DBusValue], any Error>, to message: Message, loop: ConnectionLoop,
        outSignature: DBusSignature?
    ) {
        guard !message.noReplyExpected, let reply = makeReply(result, to: message, outSignature: outSignature) else {
            return
        }
        loop.submit { $0.send(reply) }
    }

    static func makeReply(
        _ result: Result<[DBusValue], any Error>, to message: Message, outSignature: DBusSignature?
    ) -> Message? {
        switch result {
        case .success(let values):
            if let outSignature, values.dbusSignature != outSignature {
                return message.errorReply(
                    DBusError(
                        .failed,
                        "the handler returned signature '\(values.dbusSignature.rawValue)', declared '\(outSignature.rawValue)'"
                    ))
            }
            do {
                let reply = try message.methodReturn()
                try reply.append(values)
                return reply
            } catch {
                return message.errorReply(error)
            }
        case .failure(let error as DBusError):
            return message.errorReply(error)
        case .failure(let error):
            return message.errorReply(DBusError(.failed, String(describing: error)))
        }
    }

    // MARK: Properties

    static func get(_ interfaceName: String, _ name: String, from interfaces: [DBusInterface]) async throws
        -> [DBusValue]
    {
        let property = try find(interfaceName, name, in: interfaces)
        guard property.isReadable else {
            throw DBusError(.accessDenied, "Property '\(name)' is not readable")
        }
        guard let value = try await property.get() else {
            throw DBusError(.invalidArgs, "No such property '\(name)'")
        }
        return [.variant(try checked(value, property))]
    }

    static func getAll(_ interfaceName: String, from interfaces: [DBusInterface]) async throws -> [DBusValue] {
        guard let interface = interfaces.first(where: { $0.name == interfaceName }) else {
            throw DBusError(.invalidArgs, "No such interface '\(interfaceName)'")
        }
        return [try await propertyDictionary(interface, skippingFailures: false)]
    }

    static func set(_ interfaceName: String, _ name: String, _ value: DBusValue, on interfaces: [DBusInterface])
        async throws -> [DBusValue]
    {
        let property = try find(interfaceName, name, in: interfaces)
        guard property.isWritable, let setter = property.set else {
            throw DBusError(.propertyReadOnly, "Property '\(name)' is not writable")
        }
        let inner = value.unwrappedVariantOnce
        // gdbus's text (bluetoothd): the variant's signature must equal the property's.
        guard inner.hasSignature(property.signature) else {
            throw DBusError(.invalidSignature, "Invalid signature for '\(name)'")
        }
        try await setter(inner)
        return []
    }

    private static func find(_ interfaceName: String, _ name: String, in interfaces: [DBusInterface]) throws(DBusError)
        -> DBusProperty
    {
        guard let interface = interfaces.first(where: { $0.name == interfaceName }) else {
            throw DBusError(.invalidArgs, "No such interface '\(interfaceName)'")
        }
        guard let property = interface.property(named: name) else {
            throw DBusError(.invalidArgs, "No such property '\(name)'")
        }
        return property
    }

    private static func checked(_ value: DBusValue, _ property: DBusProperty) throws(DBusError) -> DBusValue {
        guard value.hasSignature(property.signature) else {
            throw DBusError(
                .failed,
                "property \(property.name) returned signature '\(value.signature.rawValue)', declared '\(property.signature.rawValue)'"
            )
        }
        return value
    }

    /// `a{sv}` of an interface's readable, present properties, in declaration order.
    static func propertyDictionary(_ interface: DBusInterface, skippingFailures: Bool) async throws -> DBusValue {
        var entries: [DBusDictEntry] = []
        for property in interface.properties where property.isReadable {
            do {
                guard let value = try await property.get() else { continue }
                entries.append(
                    DBusDictEntry(key: .string(property.name), value: .variant(try checked(value, property))))
            } catch {
                if !skippingFailures { throw error }
            }
        }
        return .dictionary(keySignature: "s", valueSignature: "v", entries)
    }

    /// `a{sa{sv}}` for InterfacesAdded / GetManagedObjects.
    static func interfacesAndProperties(_ interfaces: [DBusInterface], includeStandard: Bool) async -> DBusValue {
        var entries: [DBusDictEntry] = []
        let empty = DBusValue.dictionary(keySignature: "s", valueSignature: "v", [])
        if includeStandard {
            entries.append(DBusDictEntry(key: .string(StandardInterfaces.introspectable), value: empty))
        }
        for interface in interfaces {
            let properties = (try? await propertyDictionary(interface, skippingFailures: true)) ?? empty
            entries.append(DBusDictEntry(key: .string(interface.name), value: properties))
        }
        if includeStandard {
            entries.append(DBusDictEntry(key: .string(StandardInterfaces.properties), value: empty))
        }
        return .dictionary(keySignature: "s", valueSignature: "a{sv}", entries)
    }

    /// `a{oa{sa{sv}}}`
    static func managedObjects(_ objects: [(DBusObjectPath, [DBusInterface])]) async -> [DBusValue] {
        var entries: [DBusDictEntry] = []
        for (path, interfaces) in objects {
            entries.append(
                DBusDictEntry(
                    key: .objectPath(path), value: await interfacesAndProperties(interfaces, includeStandard: true)))
        }
        return [.dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", entries)]
    }
}
