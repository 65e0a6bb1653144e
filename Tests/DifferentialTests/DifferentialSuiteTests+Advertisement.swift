extension DifferentialSuiteTests {
    /// Families with a corpus module of their own (`scripts/differential/corpus_<family>.py`).
    static let advertisementFamilies = ["switchbot", "qingping", "sensorpush", "oralb", "mopeka", "victron", "miscale"]
    /// Decoders those families' corpora reach besides the one named after the family.
    static let advertisementFamilyDecoders = ["switchbot_0d00", "sensorpush_ht1", "miscale_v1", "miscale_v2"]
}
