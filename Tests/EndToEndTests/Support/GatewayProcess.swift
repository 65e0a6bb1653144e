import Foundation
import TestSupport

/// `blebridge run` as a subprocess with a configuration derived from the repository's
/// config.json (broker, bus and outbox pointed at the test's fixtures).
final class GatewayProcess: Sendable {
    let directory: TemporaryDirectory
    let configPath: String
    let outboxPath: String
    let arguments: [String]
    let process: ChildProcess

    /// `edit` may change the parsed configuration object before it is written. With `umask` (octal
    /// digits, e.g. "022") the gateway starts under that file mode mask, through `/bin/sh`'s
    /// `umask` and `exec` (same process), whatever this process's mask is.
    init(
        brokerURL: String, busAddress: String? = nil, directory: TemporaryDirectory? = nil,
        healthInterval: String = "30s", environment: [String: String] = [:], outboxDirectory: String? = nil,
        umask: String? = nil, edit: (inout [String: Any]) -> Void = { _ in }
    ) throws {
        let directory = try directory ?? TemporaryDirectory(prefix: "gateway-e2e")
        var configuration = try Self.repositoryConfiguration()
        // The tests ask for answers on e2e/… response topics (docs/mqtt.md, "Response topics").
        var mqtt = configuration["mqtt"] as? [String: Any] ?? [:]
        mqtt["response_topic_prefixes"] = ["e2e"]
        configuration["mqtt"] = mqtt
        edit(&configuration)
        let data = try JSONSerialization.data(withJSONObject: configuration, options: [.prettyPrinted, .sortedKeys])
        let configURL = directory.file("config.json")
        try data.write(to: configURL)
        self.directory = directory
        self.configPath = configURL.path
        self.outboxPath = outboxDirectory.map { "\($0)/outbox.sqlite" } ?? directory.file("outbox.sqlite").path
        var arguments = [
            "run", "--config", configURL.path, "--broker", brokerURL, "--outbox", outboxPath, "--health-interval",
            healthInterval,
        ]
        if let busAddress { arguments += ["--bus", busAddress] }
        self.arguments = arguments
        let binary = try BinaryLocator.blebridge()
        let command: (String, [String]) =
            umask.map { ("/bin/sh", ["-c", #"umask \#($0) && exec "$0" "$@""#, binary] + arguments) }
            ?? (binary, arguments)
        self.process = try ChildProcess(
            command.0, command.1,
            environment: environment.merging(["BLEBRIDGE_LOG": Self.logLevel]) { given, _ in given })
    }

    /// A second gateway process on the same directory, configuration and outbox (restart).
    init(restarting previous: GatewayProcess) throws {
        directory = previous.directory
        configPath = previous.configPath
        outboxPath = previous.outboxPath
        arguments = previous.arguments
        process = try ChildProcess(
            try BinaryLocator.blebridge(), arguments, environment: ["BLEBRIDGE_LOG": Self.logLevel])
    }

    /// The gateway's log level: `info`, or the test process's own `BLEBRIDGE_LOG` (e.g. `debug` to
    /// read a failure's lifecycle steps; the in-process simulator follows the same variable).
    static var logLevel: String { ProcessInfo.processInfo.environment["BLEBRIDGE_LOG"] ?? "info" }

    static func repositoryConfiguration() throws -> [String: Any] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("config.json"))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FixtureError("config.json is not an object")
        }
        return object
    }

    /// Rewrites the configuration file (for SIGHUP reload tests).
    func rewrite(_ edit: (inout [String: Any]) -> Void) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: configPath))
        guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { return }
        edit(&object)
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(
            to: URL(fileURLWithPath: configPath))
    }

    var log: String { process.standardError + process.standardOutput }
}
