import Timekeeping

/// `presence`: room presence (docs/multi-gateway.md, "Room presence"). Off unless `room` is set:
/// then this gateway publishes, for every device it hears, its smoothed RSSI and a distance
/// estimate on `<base>/<device>/presence/<gateway_id>`, and the room of the nearest gateway on
/// `<base>/<device>/room`.
package struct PresenceSettings: Sendable, Equatable {
    /// This gateway's room; nil: presence is off.
    package var room: String?
    /// The exponent `n` of the log-distance path loss model: `d = 10^((P₁ₘ − RSSI) / (10 n))`.
    package var pathLossExponent: Double
    /// The signal at 1 m (dBm) of a device that says none (no iBeacon measured power, no
    /// Eddystone TX power) and has no `tx_power` configured.
    package var referencePower: Int
    /// The time constant of the exponential smoothing of the RSSI.
    package var smoothing: Duration
    /// The shortest time between two presence messages of one device from this gateway.
    package var interval: Duration
    /// An unchanged presence is published again after this long while the device is heard.
    package var renewal: Duration
    /// A gateway whose presence for a device is older than this no longer counts for its room.
    package var timeout: Duration
    /// How much nearer (a fraction of the current gateway's distance) another gateway must be…
    package var margin: Double
    /// …without a break for this long before the room moves to it.
    package var switchDelay: Duration

    package init(
        room: String? = nil, pathLossExponent: Double = 2.5, referencePower: Int = -59,
        smoothing: Duration = .seconds(3), interval: Duration = .seconds(1), renewal: Duration = .seconds(5),
        timeout: Duration = .seconds(15), margin: Double = 0.2, switchDelay: Duration = .seconds(2)
    ) {
        self.room = room
        self.pathLossExponent = pathLossExponent
        self.referencePower = referencePower
        self.smoothing = smoothing
        self.interval = interval
        self.renewal = renewal
        self.timeout = timeout
        self.margin = margin
        self.switchDelay = switchDelay
    }

    /// Whether room presence is on (a room is set).
    package var enabled: Bool { room != nil }

    static let keys = [
        "room", "path_loss_exponent", "reference_power", "smoothing", "interval", "renewal", "timeout", "margin",
        "switch_delay",
    ]
}

extension PresenceSettings: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let defaults = PresenceSettings()
        room = try reader.nonEmptyString("room", expected: "the name of this gateway's room")
        pathLossExponent = try reader.number("path_loss_exponent", in: 1...6) ?? defaults.pathLossExponent
        referencePower = try reader.integer("reference_power", in: -127...20) ?? defaults.referencePower
        smoothing = try reader.duration("smoothing", minimum: .zero, maximum: .seconds(300)) ?? defaults.smoothing
        interval = try reader.duration("interval", minimum: .milliseconds(100)) ?? defaults.interval
        renewal = try reader.duration("renewal", minimum: .seconds(1)) ?? defaults.renewal
        timeout = try reader.duration("timeout", minimum: .seconds(1)) ?? defaults.timeout
        margin = try reader.number("margin", in: 0...0.9) ?? defaults.margin
        switchDelay = try reader.duration("switch_delay", minimum: .zero) ?? defaults.switchDelay
        if renewal < interval {
            throw reader.error(
                "renewal", .conflict,
                "\"\(DurationParser.format(renewal))\" is shorter than interval (\(DurationParser.format(interval)))")
        }
        if timeout <= renewal {
            throw reader.error(
                "timeout", .conflict,
                "\"\(DurationParser.format(timeout))\" must be longer than renewal (\(DurationParser.format(renewal))): "
                    + "a gateway that still hears the device would drop out between two of its messages")
        }
    }
}
