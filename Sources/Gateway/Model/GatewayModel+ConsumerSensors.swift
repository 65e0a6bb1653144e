extension GatewayModel {
    /// The makers of the consumer sensor families (the model is in each reading, `model`).
    static let consumerSensorMakers: [String: (manufacturer: String, model: String?)] = [
        "switchbot": ("SwitchBot", nil), "switchbot_0d00": ("SwitchBot", nil), "qingping": ("Qingping", nil),
        "sensorpush": ("SensorPush", nil), "sensorpush_ht1": ("SensorPush", "HT1"),
        "oralb": ("Oral-B", nil), "mopeka": ("Mopeka IOT", nil), "victron": ("Victron Energy", nil),
        "miscale_v1": ("Xiaomi", "Mi Smart Scale"), "miscale_v2": ("Xiaomi", "Mi Body Composition Scale"),
    ]
}
