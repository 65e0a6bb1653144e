/// `mqtt.tls`: certificates for an `mqtts://` broker. Paths are files on this machine.
package struct TLSSettings: Sendable, Equatable {
    /// CA certificate (PEM) that signed the broker's certificate; nil: the system's CA store.
    package var caFile: String?
    /// Client certificate and key (PEM) for brokers that require one; both or neither.
    package var certFile: String?
    package var keyFile: String?
    /// Skip checking the broker's host name against its certificate (testing only).
    package var insecure: Bool

    package init(caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil, insecure: Bool = false) {
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
        self.insecure = insecure
    }

    static let keys = ["ca_file", "cert_file", "key_file", "insecure"]
}

extension TLSSettings: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        caFile = try reader.nonEmptyString("ca_file", expected: "the path of a PEM file")
        certFile = try reader.nonEmptyString("cert_file", expected: "the path of a PEM file")
        keyFile = try reader.nonEmptyString("key_file", expected: "the path of a PEM file")
        insecure = try reader.bool("insecure") ?? false
        if (certFile == nil) != (keyFile == nil) {
            throw reader.error(
                certFile == nil ? "cert_file" : "key_file", .conflict,
                "cert_file and key_file go together; give both (client certificate) or neither")
        }
    }
}
