/// `org.bluez.AgentManager1`: registered pairing agents and the default one (agent-api.txt, `src/agent.c`).
package struct AgentRegistry: Sendable, Equatable {
    /// An agent object exported by a client.
    package struct Agent: Sendable, Equatable {
        package var owner: String
        package var path: String
        package var capability: String
    }

    package static let capabilities = [
        "DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput", "KeyboardDisplay",
    ]

    package private(set) var agents: [String: Agent] = [:]
    /// Owners in bluetoothd's default-agent queue: the first registered agent is the default until
    /// another calls `RequestDefaultAgent` (it moves to the head); when the default goes, the next one is.
    package private(set) var defaultQueue: [String] = []

    package var defaultOwner: String? { defaultQueue.first }

    package init() {}

    package mutating func register(owner: String, path: String, capability: String) throws(BlueZError) {
        let resolved = capability.isEmpty ? "KeyboardDisplay" : capability
        guard Self.capabilities.contains(resolved) else { throw BlueZError.invalidArguments }
        guard agents[owner] == nil else { throw BlueZError.alreadyExists }
        agents[owner] = Agent(owner: owner, path: path, capability: resolved)
        defaultQueue.append(owner)
    }

    package mutating func unregister(owner: String, path: String) throws(BlueZError) {
        guard let agent = agents[owner], agent.path == path else { throw BlueZError.doesNotExist }
        clientVanished(owner)
    }

    package mutating func requestDefault(owner: String, path: String) throws(BlueZError) {
        guard let agent = agents[owner], agent.path == path else { throw BlueZError.doesNotExist }
        defaultQueue.removeAll { $0 == owner }
        defaultQueue.insert(owner, at: 0)
    }

    package mutating func clientVanished(_ owner: String) {
        agents[owner] = nil
        defaultQueue.removeAll { $0 == owner }
    }

    /// The agent that handles pairing started by `sender`: its own, else the default.
    package func agent(for sender: String) -> Agent? {
        agents[sender] ?? defaultOwner.flatMap { agents[$0] }
    }
}
