import Configuration
import Foundation
import TestSupport

@testable import Gateway

/// A gateway with the configuration `json` (default: the defaults), not started: no bus at `directory/no-bus`, a broker URL
/// where nothing listens (the client would retry in the background once started), its outbox in
/// `directory`.
/// `brokerURL`: a broker instead (the test connects the client itself).
func unstartedGateway(in directory: TemporaryDirectory, json: String = "{}", brokerURL: String? = nil) async throws
    -> Gateway
{
    let port = try FreePort.loopback()
    let configuration = try ConfigurationLoader().decode(Data(json.utf8))
    return try await Gateway(
        configuration: configuration,
        options: GatewayOptions(
            busAddress: "unix:path=\(directory.file("no-bus").path)",
            brokerURL: brokerURL ?? "mqtt://127.0.0.1:\(port)",
            outboxPath: directory.file("outbox.sqlite").path, drainTimeout: .milliseconds(200)))
}
