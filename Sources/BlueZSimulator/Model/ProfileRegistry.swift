/// `org.bluez.ProfileManager1`: external profiles registered by clients (`src/profile.c`, 5.66).
/// The simulator only keeps the registrations (it has no BR/EDR to connect them over).
package struct ProfileRegistry: Sendable, Equatable {
    package struct Profile: Sendable, Equatable {
        package var owner: String
        package var path: String
        package var uuid: String
    }

    package private(set) var profiles: [Profile] = []

    package init() {}

    /// `RegisterProfile`: the same client and path twice → `AlreadyExists`; a UUID another
    /// profile serves → `NotPermitted` "UUID already registered".
    package mutating func register(owner: String, path: String, uuid: String) throws(BlueZError) {
        if profiles.contains(where: { $0.owner == owner && $0.path == path }) { throw BlueZError.alreadyExists }
        if profiles.contains(where: { $0.uuid.lowercased() == uuid.lowercased() }) {
            throw BlueZError.notPermitted("UUID already registered")
        }
        profiles.append(Profile(owner: owner, path: path, uuid: uuid))
    }

    /// `UnregisterProfile`: `DoesNotExist` unless this client registered that path.
    package mutating func unregister(owner: String, path: String) throws(BlueZError) {
        guard let index = profiles.firstIndex(where: { $0.owner == owner && $0.path == path }) else {
            throw BlueZError.doesNotExist
        }
        profiles.remove(at: index)
    }

    package mutating func clientVanished(_ owner: String) { profiles.removeAll { $0.owner == owner } }
}
