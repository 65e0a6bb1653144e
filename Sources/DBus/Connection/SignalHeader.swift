/// Header fields of an incoming signal, pointing into the message (valid during dispatch).
struct SignalHeader {
    let sender: UnsafePointer<CChar>?
    let path: UnsafePointer<CChar>?
    let interface: UnsafePointer<CChar>?
    let member: UnsafePointer<CChar>?
}
