/// The adapter's peripheral role: registered GATT applications and advertisements, with the
/// rules of bluetoothd 5.66 (`src/gatt-database.c`, `src/advertising.c`). Pure; the caller reads
/// the clients' objects over the bus between ``reserveApplication(owner:path:)`` and ``add(_:)``.
package struct PeripheralRoleState: Sendable, Equatable {
    /// `LEAdvertisingManager1.SupportedInstances`.
    package let supportedInstances: Int
    package private(set) var applications: [LocalGattApplication] = []
    package private(set) var advertisements: [RegisteredAdvertisement] = []
    /// Registrations whose objects are being read (they count as registered for duplicates).
    private var pendingApplications: Set<[String]> = []
    private var pendingInstances: [[String]: Int] = [:]

    package init(supportedInstances: Int) { self.supportedInstances = supportedInstances }

    package var activeInstances: Int { advertisements.count + pendingInstances.count }

    /// `RegisterApplication`: one application per (client, path) → `AlreadyExists`.
    package mutating func reserveApplication(owner: String, path: String) throws(BlueZError) {
        guard !pendingApplications.contains([owner, path]),
            !applications.contains(where: { $0.owner == owner && $0.path == path })
        else { throw BlueZError.alreadyExists }
        pendingApplications.insert([owner, path])
    }

    /// The application's objects were read: registered, or (nil) refused.
    package mutating func finishApplication(owner: String, path: String, _ application: LocalGattApplication?) {
        pendingApplications.remove([owner, path])
        if let application { applications.append(application) }
    }

    /// `UnregisterApplication`: `DoesNotExist` unless this client registered that path.
    package mutating func unregisterApplication(owner: String, path: String) throws(BlueZError) {
        guard let index = applications.firstIndex(where: { $0.owner == owner && $0.path == path }) else {
            throw BlueZError.doesNotExist
        }
        applications.remove(at: index)
    }

    /// `RegisterAdvertisement`: `AlreadyExists` for the same (client, path); `NotPermitted`
    /// "Maximum advertisements reached" when every instance is taken. Returns the instance.
    package mutating func reserveAdvertisement(owner: String, path: String) throws(BlueZError) -> Int {
        guard pendingInstances[[owner, path]] == nil,
            !advertisements.contains(where: { $0.owner == owner && $0.path == path })
        else { throw BlueZError.alreadyExists }
        let taken = Set(advertisements.map(\.instance)).union(pendingInstances.values)
        guard let instance = (1...max(1, supportedInstances)).first(where: { !taken.contains($0) }),
            supportedInstances > 0
        else { throw BlueZError.notPermitted("Maximum advertisements reached") }
        pendingInstances[[owner, path]] = instance
        return instance
    }

    package mutating func finishAdvertisement(owner: String, path: String, _ advertisement: RegisteredAdvertisement?) {
        pendingInstances[[owner, path]] = nil
        if let advertisement { advertisements.append(advertisement) }
    }

    /// `UnregisterAdvertisement`: `DoesNotExist` unless this client registered that path.
    package mutating func unregisterAdvertisement(owner: String, path: String) throws(BlueZError) {
        guard let index = advertisements.firstIndex(where: { $0.owner == owner && $0.path == path }) else {
            throw BlueZError.doesNotExist
        }
        advertisements.remove(at: index)
    }

    /// A client left the bus: its applications and advertisements go. Returns whether
    /// `ActiveInstances` changed.
    package mutating func clientVanished(_ owner: String) -> Bool {
        applications.removeAll { $0.owner == owner }
        let before = advertisements.count
        advertisements.removeAll { $0.owner == owner }
        return advertisements.count != before
    }
}
