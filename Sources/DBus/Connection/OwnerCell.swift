/// The current owner of a well-known name that subscriptions filter on, kept up to date from
/// `NameOwnerChanged`. Confined to the connection thread.
final class OwnerCell {
    let name: String
    var owner: ContiguousArray<CChar>?
    var references = 0
    private(set) var isReady = false
    private var waiters: [() -> Void] = []

    init(name: String) { self.name = name }

    func setOwner(_ owner: String?) {
        self.owner = owner.flatMap { $0.isEmpty ? nil : ContiguousArray($0.utf8CString) }
    }

    func whenReady(_ body: @escaping () -> Void) {
        if isReady { body() } else { waiters.append(body) }
    }

    func markReady() {
        isReady = true
        let waiting = waiters
        waiters = []
        for waiter in waiting { waiter() }
    }
}
