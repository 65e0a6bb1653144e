/// Oral-B toothbrush models by the model byte of their advertisement, and the brushing modes each
/// line names (the iO line numbers its modes differently from the older lines).
struct OralBModel: Sendable {
    var name: String
    var modes: [UInt8: String]

    static let smartSeriesModes: [UInt8: String] = [
        0: "off", 1: "daily clean", 2: "sensitive", 3: "massage", 4: "whitening", 5: "deep clean",
        6: "tongue cleaning", 7: "turbo", 255: "unknown",
    ]
    static let ioSeriesModes: [UInt8: String] = [
        0: "daily clean", 1: "sensitive", 2: "gum care", 3: "whiten", 4: "intense", 5: "super sensitive",
        6: "tongue cleaning", 8: "settings", 9: "off", 11: "smart adapt",
    ]

    /// Model byte → model. The lines (D36, D701, D700, iO, D21, D601, D706) each use a range of
    /// ids for their handle variants.
    static let byID: [UInt8: OralBModel] = {
        var table: [UInt8: OralBModel] = [:]
        let lines: [(ClosedRange<UInt8>, String, [UInt8: String])] = [
            (0...2, "Triumph D36", smartSeriesModes), (32...34, "Genius Series D701", smartSeriesModes),
            (39...41, "Smart Series D700", smartSeriesModes), (48...50, "IO Series", ioSeriesModes),
            (52...52, "IO Series 4", ioSeriesModes), (53...53, "IO Series 5", ioSeriesModes),
            (54...54, "IO Series", ioSeriesModes), (64...70, "Smart Series D21", smartSeriesModes),
            (80...87, "Pro Series D601", smartSeriesModes), (112...114, "Genius X D706", smartSeriesModes),
            (117...119, "Genius X D706", smartSeriesModes),
        ]
        for (ids, name, modes) in lines {
            for id in ids { table[id] = OralBModel(name: name, modes: modes) }
        }
        return table
    }()

    /// Toothbrush states by the state byte.
    static let states: [UInt8: String] = [
        0: "unknown", 1: "initializing", 2: "idle", 3: "running", 4: "charging", 5: "setup", 6: "flight menu",
        8: "selection menu", 9: "off", 10: "post brushing statistics", 113: "final test", 114: "pcb test",
        115: "sleeping", 116: "transport",
    ]
}
