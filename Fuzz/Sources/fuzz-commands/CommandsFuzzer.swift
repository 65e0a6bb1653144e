import Configuration
import Decoders
import Foundation
import FuzzSupport
import Gateway

/// The MQTT command path: the input is a topic, a NUL, and a payload. The topic is classified as
/// the gateway classifies every message on its command filters, then the command gate (JSON,
/// value formats, layouts, bridge requests, raw GATT rules, rate limit) judges the payload, with
/// the policy of the repository's sample configuration (config.json: named commands, a layout
/// command, raw GATT rules). The response topic policy checks the topic as a response topic.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommands(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (topicBytes, payload) = FuzzInput(data, size).splitAtNUL
    let topic = String(decoding: topicBytes, as: UTF8.self)
    let model = SampleModel.model
    _ = SampleModel.responses.problem(with: topic)
    guard let kind = model.topics.classify(topic) else { return 0 }
    var gate = CommandGate(policy: model.commandPolicy)
    _ = gate.transaction(in: payload)
    _ = gate.admit(topic: topic, kind: kind, payload: payload, at: .now)
    return 0
}

/// The gateway model of config.json, loaded once.
enum SampleModel {
    static let model: GatewayModel = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("config.json").path
        do {
            let loader = ConfigurationLoader(knownDecoders: DecoderRegistry.standard.knownNames)
            return GatewayModel(configuration: try loader.load(path: path))
        } catch {
            fatalError("cannot load \(path): \(error)")
        }
    }()

    static let responses = ResponseTopicPolicy(
        topics: model.topics, deviceIDs: Set(model.configuration.devices.map(\.id)), extraPrefixes: ["clients/"])
}
