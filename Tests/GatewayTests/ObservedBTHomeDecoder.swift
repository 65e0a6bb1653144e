import Decoders

/// BTHome's decoder, calling `observe` before each advertisement it decodes (to note the thread, or
/// count them).
struct ObservedBTHomeDecoder: AdvertisementDecoder {
    let inner = BTHomeDecoder()
    let observe: @Sendable () -> Void

    var name: String { inner.name }
    var source: AdvertisementSource { inner.source }
    var payloadMarkers: [PayloadMarker] { inner.payloadMarkers }
    func accepts(_ payload: [UInt8], context: AdvertisementContext) -> Bool {
        inner.accepts(payload, context: context)
    }
    func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        observe()
        return try inner.decode(payload, context: context)
    }
}
