/// `org.bluez.AgentManager1`: registered pairing agents and the default one (agent-api.txt, `src/agent.c`).
public struct AgentRegistry: Sendable, Equatable {
    /// An agent object exported by a client.
    public struct Agent: Sendable, Equatable {
        public var owner: String
        public var path: String
        public var capability: String
    }

    public static let capabilities = [
        "DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput", "KeyboardDisplay",
    ]

    public private(set) var agents: [String: Agent] = [:]
    /// Owners in bluetoothd's default-agent queue: the first registered agent is the default until
    /// another calls `RequestDefaultAgent` (it moves to the head); when the default goes, the next one is.
    public private(set) var defaultQueue: [String] = []

    public var defaultOwner: String? { defaultQueue.first }

    public init() {}

    public mutating func register(owner: String, path: String, capability: String) throws(BlueZError) {
        let resolved = capability.isEmpty ? "KeyboardDisplay" : capability
        guard Self.capabilities.contains(resolved) else { throw BlueZError.invalidArguments }
        guard agents[owner] == nil else { throw BlueZError.alreadyExists }
        agents[owner] = Agent(owner: owner, path: path, capability: resolved)
        defaultQueue.append(owner)
    }

    public mutating func unregister(owner: String, path: String) throws(BlueZError) {
        guard let agent = agents[owner], agent.path == path else { throw BlueZError.doesNotExist }
        clientVanished(owner)
    }

    public mutating func requestDefault(owner: String, path: String) throws(BlueZError) {
        guard let agent = agents[owner], agent.path == path else { throw BlueZError.doesNotExist }
        defaultQueue.removeAll { $0 == owner }
        defaultQueue.insert(owner, at: 0)
    }

    public mutating func clientVanished(_ owner: String) {
        agents[owner] = nil
        defaultQueue.removeAll { $0 == owner }
    }

    /// The agent that handles pairing started by `sender`: its own, else the default.
    public func agent(for sender: String) -> Agent? {
        agents[sender] ?? defaultOwner.flatMap { agents[$0] }
    }
}
