/// A match rule for signals (`type='signal',sender='org.bluez',…`).
///
/// Fields left nil match anything. The rule is installed on the bus by
/// `DBusConnection.signals(matching:)` and checked again locally, so each stream receives only
/// its own signals even when several rules overlap.
package struct DBusMatchRule: Sendable, Hashable, CustomStringConvertible {
    /// A unique name (`:1.42`), a well-known name (`org.bluez`, resolved to its current owner) or
    /// `org.freedesktop.DBus`.
    package var sender: String?
    package var interface: String?
    package var member: String?
    package var path: DBusObjectPath?
    /// Matches `pathNamespace` itself and every path below it.
    package var pathNamespace: DBusObjectPath?
    /// The first argument, when it is a string (or object path) equal to this.
    package var arg0: String?

    package init(
        sender: String? = nil, interface: String? = nil, member: String? = nil, path: DBusObjectPath? = nil,
        pathNamespace: DBusObjectPath? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    /// The rule in the bus daemon's syntax.
    package var string: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // Inside quotes only the quote itself needs care: close, escape, reopen.
            parts.append("\(key)='\(value.replacingOccurrences(of: "'", with: "'\\''"))'")
        }
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    package var description: String { string }

    /// `PropertiesChanged` for one interface (arg0), optionally restricted to a sender and a path.
    package static func propertiesChanged(
        sender: String? = nil, interface: String? = nil, path: DBusObjectPath? = nil,
        pathNamespace: DBusObjectPath? = nil
    ) -> DBusMatchRule {
        DBusMatchRule(
            sender: sender, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: path,
            pathNamespace: pathNamespace, arg0: interface)
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
