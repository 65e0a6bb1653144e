/// Names of the interfaces this module implements for every exported object.
enum StandardInterfaces {
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let properties = "org.freedesktop.DBus.Properties"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let peer = "org.freedesktop.DBus.Peer"

    static let reserved: Set<String> = [introspectable, properties, objectManager, peer]
}
