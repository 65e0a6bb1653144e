/// One entry of a D-Bus dictionary (`{kv}`).
public struct DBusDictEntry: Sendable, Hashable {
    package var key: DBusValue
    package var value: DBusValue

    package init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}
