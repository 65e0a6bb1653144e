import Bluetooth
import ByteLayouts

/// `devices[].subscribe[]`: one characteristic the gateway follows on a connected device.
package struct Subscription: Sendable, Equatable {
    package enum Mode: String, ConfigurationEnum {
        /// GATT notifications (no acknowledgement).
        case notify
        /// GATT indications (acknowledged).
        case indicate
        /// Read every `interval`.
        case read
    }

    package var characteristic: BluetoothUUID
    /// The service holding it, when the same characteristic appears in several services.
    package var service: BluetoothUUID?
    package var mode: Mode
    /// For `read`: how often (required).
    package var interval: Duration?
    /// For `notify`/`indicate`: reconnect when nothing arrived for this long (nil: never).
    package var silenceTimeout: Duration?
    /// A decoder name overriding the one chosen by UUID.
    package var decoder: String?
    /// A user-defined layout decoding the value (instead of `decoder`).
    package var layout: ByteLayout?

    package init(
        characteristic: BluetoothUUID, service: BluetoothUUID? = nil, mode: Mode = .notify, interval: Duration? = nil,
        silenceTimeout: Duration? = nil, decoder: String? = nil, layout: ByteLayout? = nil
    ) {
        self.characteristic = characteristic
        self.service = service
        self.mode = mode
        self.interval = interval
        self.silenceTimeout = silenceTimeout
        self.decoder = decoder
        self.layout = layout
    }

    static let keys = ["characteristic", "service", "mode", "interval", "silence_timeout", "decoder", "layout"]
}

extension Subscription: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        characteristic = try reader.required(
            try reader.uuid("characteristic", kind: .characteristic), "characteristic",
            accepted: ObjectReader.UUIDKind.characteristic.accepted)
        service = try reader.uuid("service", kind: .service)
        mode = try reader.enumeration(Mode.self, "mode") ?? .notify
        interval = try reader.duration("interval", minimum: .seconds(1))
        silenceTimeout = try reader.duration("silence_timeout", minimum: .seconds(1))
        self.decoder = try reader.decoderName("decoder")
        layout = try reader.layout("layout")
        if self.decoder != nil, layout != nil {
            throw reader.error("layout", .conflict, "give either decoder or layout, not both")
        }
        switch mode {
        case .read:
            guard interval != nil else {
                throw reader.error(
                    "interval", .missingKey, "mode \"read\" needs an interval, e.g. \"interval\": \"10m\"")
            }
            if silenceTimeout != nil {
                throw reader.error(
                    "silence_timeout", .conflict,
                    "silence_timeout applies to mode \"notify\" or \"indicate\", not \"read\"")
            }
        case .notify, .indicate:
            if interval != nil {
                throw reader.error(
                    "interval", .conflict, "interval applies to mode \"read\"; remove it or set \"mode\": \"read\"")
            }
        }
    }
}
