internal import CDBus

#if canImport(Glibc)
    import Glibc
#endif

extension LoopState {
    /// Every incoming message that is not a reply to a pending call.
    func handle(_ raw: OpaquePointer) -> DBusHandlerResult {
        switch dbus_message_get_type(raw) {
        case DBUS_MESSAGE_TYPE_SIGNAL:
            routeSignal(raw)
            return DBUS_HANDLER_RESULT_HANDLED
        case DBUS_MESSAGE_TYPE_METHOD_CALL:
            handleMethodCall(Message(retaining: raw))
            return DBUS_HANDLER_RESULT_HANDLED
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }

    private func routeSignal(_ raw: OpaquePointer) {
        let header = SignalHeader(
            sender: dbus_message_get_sender(raw), path: dbus_message_get_path(raw),
            interface: dbus_message_get_interface(raw), member: dbus_message_get_member(raw))
        if let interface = header.interface, strcmp(interface, "org.freedesktop.DBus.Local") == 0 {
            if let member = header.member, strcmp(member, "Disconnected") == 0 {
                shutDown(reason: DBusError(.disconnected, "the bus connection was lost"))
            }
            return
        }
        if !trackedNames.isEmpty, let member = header.member, strcmp(member, "NameOwnerChanged") == 0,
            let sender = header.sender, strcmp(sender, "org.freedesktop.DBus") == 0
        {
            trackOwnerChange(raw)
        }
        guard !subscriptions.isEmpty else { return }

        var arg0Loaded = false
        var arg0: UnsafePointer<CChar>?
        let readArg0 = { () -> UnsafePointer<CChar>? in
            if !arg0Loaded {
                arg0Loaded = true
                var iter = DBusMessageIter()
                if dbus_message_iter_init(raw, &iter) != 0 {
                    let code = dbus_message_iter_get_arg_type(&iter)
                    if code == TypeCode.string || code == TypeCode.objectPath {
                        dbus_message_iter_get_basic(&iter, &arg0)
                    }
                }
            }
            return arg0
        }
        var signal: DBusSignal?
        for subscription in subscriptions where subscription.matches(header, arg0: readArg0) {
            if signal == nil {
                signal = decodeSignal(raw, header)
                if signal == nil { return }
                signal!.sequence = signalOrder.delivered(from: signal!.sender)
            }
            if subscription.batch.isEmpty { roundSubscriptions.append(subscription) }
            subscription.batch.append(signal!)
        }
    }

    private func decodeSignal(_ raw: OpaquePointer, _ header: SignalHeader) -> DBusSignal? {
        var iter = DBusMessageIter()
        var arguments: [DBusValue] = []
        if dbus_message_iter_init(raw, &iter) != 0 {
            arguments.reserveCapacity(4)  // one allocation for typical signals (PropertiesChanged: 3)
            // A string first argument (PropertiesChanged's interface) repeats: reuse it.
            if dbus_message_iter_get_arg_type(&iter) == TypeCode.string {
                var pointer: UnsafePointer<CChar>?
                dbus_message_iter_get_basic(&iter, &pointer)
                arguments.append(.string(pointer.map { recentStrings.string($0, .firstArgument) } ?? ""))
                dbus_message_iter_next(&iter)
            }
            do {
                try MessageDecoder.decodeAll(&iter, into: &arguments)
            } catch {
                return nil
            }
        }
        return DBusSignal(
            sender: header.sender.map { recentStrings.string($0, .sender) } ?? "",
            path: DBusObjectPath(trusted: header.path.map { recentStrings.string($0, .path) } ?? "/"),
            interface: header.interface.map { recentStrings.string($0, .interface) } ?? "",
            member: header.member.map { recentStrings.string($0, .member) } ?? "", arguments: arguments)
    }

    private func trackOwnerChange(_ raw: OpaquePointer) {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0,
            case .string(let name)? = try? MessageDecoder.decode(&iter),
            let cell = trackedNames[name]
        else { return }
        dbus_message_iter_next(&iter)
        dbus_message_iter_next(&iter)
        guard case .string(let newOwner)? = try? MessageDecoder.decode(&iter) else { return }
        cell.setOwner(newOwner)
    }

    /// Hands each subscription the signals decoded during this dispatch round. Delivering them
    /// together (rather than between decodes) lets a waiting consumer wake once per round.
    func flushDeliveries() {
        guard !roundSubscriptions.isEmpty else { return }
        for subscription in roundSubscriptions {
            let batch = subscription.batch
            subscription.batch = []
            subscription.deliver(batch)
        }
        roundSubscriptions.removeAll(keepingCapacity: true)
    }

    // MARK: Subscriptions

    /// Registers a subscription; for a well-known sender, starts tracking its owner.
    func addSubscription(
        rule: DBusMatchRule, deliver: @escaping @Sendable ([DBusSignal]) -> Void,
        finish: @escaping @Sendable () -> Void
    ) throws(DBusError) -> (Subscription, OwnerCell?) {
        _ = try requireConnection()
        var cell: OwnerCell?
        if let sender = rule.sender, !sender.hasPrefix(":"), sender != "org.freedesktop.DBus" {
            cell = trackName(sender)
        }
        let subscription = Subscription(
            id: nextSubscriptionID, rule: rule, ownerCell: cell, deliver: deliver, finish: finish)
        nextSubscriptionID += 1
        subscriptions.append(subscription)
        return (subscription, cell)
    }

    /// Removes a subscription and its match rule on the bus.
    func removeSubscription(_ id: UInt64, finishStream: Bool) {
        guard let index = subscriptions.firstIndex(where: { $0.id == id }) else { return }
        let subscription = subscriptions.remove(at: index)
        if finishStream { subscription.finish() }
        busCallWithoutReply("RemoveMatch", subscription.rule.string)
        if let cell = subscription.ownerCell { untrackName(cell) }
    }

    private func trackName(_ name: String) -> OwnerCell {
        if let cell = trackedNames[name] {
            cell.references += 1
            return cell
        }
        let cell = OwnerCell(name: name)
        cell.references = 1
        trackedNames[name] = cell
        // The bus handles our messages in order: the rule is active before GetNameOwner runs,
        // so no change can fall between the two.
        busCallWithoutReply("AddMatch", Self.ownerRule(name))
        guard
            let message = try? Message.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: "GetNameOwner"),
            (try? message.append([.string(name)])) != nil
        else {
            cell.markReady()
            return cell
        }
        startCall(message, timeoutMilliseconds: 25_000, token: CallToken()) { result in
            if case .success(let reply) = result, reply.replyError() == nil,
                case .string(let owner)? = (try? reply.arguments())?.first
            {
                cell.setOwner(owner)
            }
            cell.markReady()
        }
        return cell
    }

    private func untrackName(_ cell: OwnerCell) {
        cell.references -= 1
        guard cell.references == 0 else { return }
        trackedNames[cell.name] = nil
        busCallWithoutReply("RemoveMatch", Self.ownerRule(cell.name))
    }

    private static func ownerRule(_ name: String) -> String {
        DBusMatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
            path: "/org/freedesktop/DBus", arg0: name
        ).string
    }

    /// A call to the bus driver whose answer nobody needs (RemoveMatch on unsubscribe).
    func busCallWithoutReply(_ method: String, _ argument: String) {
        guard connection != nil, !finished,
            let message = try? Message.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: method),
            (try? message.append([.string(argument)])) != nil
        else { return }
        dbus_message_set_no_reply(message.raw, 1)
        send(message)
    }
}
