internal import CDBus

extension LoopState {
    /// Routes an incoming method call to an exported handler or a standard interface.
    func handleMethodCall(_ message: Message) {
        let path = DBusObjectPath(trusted: message.path ?? "/")
        let interfaceName = message.interface
        let member = message.member ?? ""
        let signature = message.signature
        let interfaces = objects[path]
        let loop = self.loop

        func replyNow(_ result: Result<[DBusValue], any Error>) {
            guard !message.noReplyExpected,
                let reply = ServerReplies.makeReply(result, to: message, outSignature: nil)
            else { return }
            send(reply)
        }
        func fail(_ name: DBusErrorName, _ text: String) { replyNow(.failure(DBusError(name, text))) }
        // The text libdbus and BlueZ's gdbus use, trailing newline included (see the bluetoothd
        // 5.66 reference capture in Tests/BlueZSimulatorTests/Reference).
        let missingMethodText =
            "Method \"\(member)\" with signature \"\(signature)\" on interface \"\(interfaceName ?? "(null)")\" doesn't exist\n"
        func unknownMethod() { fail(.unknownMethod, missingMethodText) }
        func requireSignature(_ expected: String) -> Bool {
            guard signature == expected else {
                switch signatureMismatch[path] ?? .invalidArgs {
                case .invalidArgs:
                    fail(.invalidArgs, "Invalid arguments: expected signature '\(expected)', got '\(signature)'")
                case .unknownMethod:
                    unknownMethod()
                }
                return false
            }
            return true
        }

        // org.freedesktop.DBus.Introspectable, on objects and on the nodes leading to them.
        if member == "Introspect", interfaceName == StandardInterfaces.introspectable || interfaceName == nil {
            let children = childNodes(of: path)
            guard interfaces != nil || !children.isEmpty || objectManagers.contains(path) || path == .root else {
                fail(.unknownObject, "No such object path '\(path)'")
                return
            }
            if signature != "", signatureMismatch[path] == .unknownMethod {
                // gdbus declines it, and libdbus answers with its own document (as bluetoothd does).
                replyNow(.success([.string(IntrospectionXML.childNodesOnly(children))]))
                return
            }
            guard requireSignature("") else { return }
            let xml = IntrospectionXML.document(
                interfaces: interfaces, isObjectManager: objectManagers.contains(path), children: children)
            replyNow(.success([.string(xml)]))
            return
        }

        // org.freedesktop.DBus.ObjectManager
        if interfaceName == StandardInterfaces.objectManager
            || (interfaceName == nil && member == "GetManagedObjects" && objectManagers.contains(path))
        {
            guard objectManagers.contains(path), member == "GetManagedObjects" else {
                if interfaces == nil && !objectManagers.contains(path) {
                    fail(.unknownObject, "No such object path '\(path)'")
                } else {
                    unknownMethod()
                }
                return
            }
            guard requireSignature("") else { return }
            let managed = objects.filter { $0.key.isDescendant(of: path, orEqual: false) }
                .sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            let gate = objectManagerGates[path]
            ServerReplies.respond(to: message, loop: loop, outSignature: nil) {
                try await gate?()
                return await ServerReplies.managedObjects(managed)
            }
            return
        }

        guard let interfaces else {
            // A method call on a path with no object: UnknownObject, with gdbus's text.
            fail(.unknownObject, missingMethodText)
            return
        }

        // org.freedesktop.DBus.Properties
        if interfaceName == StandardInterfaces.properties {
            switch member {
            case "Get":
                guard requireSignature("ss") else { return }
                ServerReplies.respond(to: message, loop: loop, outSignature: nil) {
                    let arguments = try message.arguments()
                    return try await ServerReplies.get(
                        arguments[0].asString ?? "", arguments[1].asString ?? "", from: interfaces)
                }
            case "GetAll":
                guard requireSignature("s") else { return }
                ServerReplies.respond(to: message, loop: loop, outSignature: nil) {
                    let arguments = try message.arguments()
                    return try await ServerReplies.getAll(arguments[0].asString ?? "", from: interfaces)
                }
            case "Set":
                guard requireSignature("ssv") else { return }
                ServerReplies.respond(to: message, loop: loop, outSignature: nil) {
                    let arguments = try message.arguments()
                    return try await ServerReplies.set(
                        arguments[0].asString ?? "", arguments[1].asString ?? "", arguments[2], on: interfaces)
                }
            default:
                unknownMethod()
            }
            return
        }

        // Exported interfaces.
        let method: DBusMethod?
        let resolvedInterface: String?
        if let interfaceName {
            method = interfaces.first { $0.name == interfaceName }?.method(named: member)
            resolvedInterface = interfaceName
        } else {
            let owner = interfaces.first { $0.method(named: member) != nil }
            method = owner?.method(named: member)
            resolvedInterface = owner?.name
        }
        guard let method else {
            unknownMethod()
            return
        }
        guard requireSignature(method.inSignature.rawValue) else { return }
        let sender = message.sender ?? ""
        let notice = DBusReplyNotice()
        let signalsBefore = signalOrder.lastSignal(from: sender)
        let serial = message.serial
        ServerReplies.respond(to: message, loop: loop, outSignature: method.outSignature, notice: notice) {
            let call = DBusMethodCall(
                sender: sender, path: path, interface: resolvedInterface, member: member,
                arguments: try message.arguments(), replyNotice: notice, signalsBefore: signalsBefore,
                serial: serial)
            return try await method.handler(call)
        }
    }

    /// Names of the direct children of `path` among exported objects and object managers.
    func childNodes(of path: DBusObjectPath) -> [String] {
        var names = Set<String>()
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        for candidate in Array(objects.keys) + Array(objectManagers) where candidate.rawValue.hasPrefix(prefix) {
            let rest = candidate.rawValue.dropFirst(prefix.count)
            if let first = rest.split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }

    // MARK: Export

    /// Adds interfaces at `path`; emits InterfacesAdded from every object manager above it.
    func export(
        path: DBusObjectPath, interfaces: [DBusInterface], properties: [DBusValue],
        signatureMismatch mismatch: DBusSignatureMismatch
    ) throws(DBusError) {
        _ = try requireConnection()
        let existing = objects[path] ?? []
        var names = Set(existing.map(\.name))
        for interface in interfaces {
            try WireNames.validateInterface(interface.name)
            guard !StandardInterfaces.reserved.contains(interface.name) else {
                throw DBusError(.invalidArgs, "\(interface.name) is provided by the connection itself")
            }
            guard names.insert(interface.name).inserted else {
                throw DBusError(.invalidArgs, "\(interface.name) is already exported at \(path)")
            }
            for method in interface.methods { try WireNames.validateMember(method.name) }
        }
        try setSignatureMismatch(mismatch, at: path)
        objects[path] = existing + interfaces
        let isNew = existing.isEmpty
        var entries: [DBusDictEntry] = []
        let empty = DBusValue.dictionary(keySignature: "s", valueSignature: "v", [])
        if isNew { entries.append(DBusDictEntry(key: .string(StandardInterfaces.introspectable), value: empty)) }
        for (interface, values) in zip(interfaces, properties) {
            entries.append(DBusDictEntry(key: .string(interface.name), value: values))
        }
        if isNew { entries.append(DBusDictEntry(key: .string(StandardInterfaces.properties), value: empty)) }
        let added: [DBusValue] = [
            .objectPath(path), .dictionary(keySignature: "s", valueSignature: "a{sv}", entries),
        ]
        emitFromManagers(above: path, member: "InterfacesAdded", arguments: added)
    }

    /// Removes `names` (all when nil) at `path`; emits InterfacesRemoved.
    func unexport(path: DBusObjectPath, names: [String]?) throws(DBusError) {
        _ = try requireConnection()
        guard let existing = objects[path] else { return }
        let removing = names.map(Set.init) ?? Set(existing.map(\.name))
        let remaining = existing.filter { !removing.contains($0.name) }
        let removed = existing.filter { removing.contains($0.name) }.map(\.name)
        guard !removed.isEmpty else { return }
        objects[path] = remaining.isEmpty ? nil : remaining
        if remaining.isEmpty && !objectManagers.contains(path) { signatureMismatch[path] = nil }
        var listed = removed
        if remaining.isEmpty {
            listed = [StandardInterfaces.introspectable] + removed + [StandardInterfaces.properties]
        }
        emitFromManagers(above: path, member: "InterfacesRemoved", arguments: [.objectPath(path), .strings(listed)])
    }

    /// Records how calls at `path` answer a wrong argument signature; an object keeps one way.
    func setSignatureMismatch(_ mismatch: DBusSignatureMismatch, at path: DBusObjectPath) throws(DBusError) {
        if let current = signatureMismatch[path], current != mismatch {
            throw DBusError(
                .invalidArgs, "\(path) already answers a wrong signature with \(current), not \(mismatch)")
        }
        signatureMismatch[path] = mismatch
    }

    private func emitFromManagers(above path: DBusObjectPath, member: String, arguments: [DBusValue]) {
        for manager in objectManagers where path.isDescendant(of: manager, orEqual: false) {
            guard
                let signal = try? Message.signal(
                    path: manager, interface: StandardInterfaces.objectManager, name: member),
                (try? signal.append(arguments)) != nil
            else { continue }
            send(signal)
        }
    }
}
