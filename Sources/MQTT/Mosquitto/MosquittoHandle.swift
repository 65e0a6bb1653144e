internal import CMosquitto

/// Owns one `struct mosquitto` and the callback context it points to; destroys both on deinit.
///
/// `@unchecked Sendable` is sound because: `pointer` never changes; the handle is put in
/// threaded mode (`mosquitto_threaded_set(true)`), in which libmosquitto guards the state that
/// `mosquitto_publish_v5`, `mosquitto_subscribe_v5`, `mosquitto_unsubscribe` and
/// `mosquitto_disconnect` touch with its own mutexes, and those are the only calls made from
/// outside the network thread; every other call (options, connect, loop) is made by the network
/// thread alone; and `mosquitto_destroy` runs in deinit, when no thread holds the handle.
final class MosquittoHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    let context: MosquittoCallbackContext
    private let retainedContext: Unmanaged<MosquittoCallbackContext>

    private static let libraryInitialized: Bool = {
        mosquitto_lib_init()
        return true
    }()

    init(clientID: String, cleanSession: Bool, context: MosquittoCallbackContext) throws(MQTTError) {
        _ = Self.libraryInitialized
        let retained = Unmanaged.passRetained(context)
        let id: String? = clientID.isEmpty ? nil : clientID
        guard let pointer = mosquitto_new(id, cleanSession, retained.toOpaque()) else {
            retained.release()
            throw MQTTError(.outOfMemory, "mosquitto_new failed for client id '\(clientID)'")
        }
        self.pointer = pointer
        self.context = context
        self.retainedContext = retained
        mosquitto_threaded_set(pointer, true)
        MosquittoCallbackContext.install(on: pointer)
    }

    deinit {
        mosquitto_destroy(pointer)
        retainedContext.release()
    }
}
