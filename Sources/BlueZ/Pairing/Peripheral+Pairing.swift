import Bluetooth

extension Peripheral {
    /// Runs a GATT operation; when it fails with `insufficientAuthentication` and the manager allows it
    /// (`CentralManager.Options.pairOnInsufficientAuthentication`), pairs and runs it once more. A failed pairing
    /// throws the pairing error (`authenticationFailed`, …).
    func retryingAfterPairing<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as BluetoothError where error.code == .insufficientAuthentication {
            guard let pair = authenticationHandler else { throw error }
            try await pair(self, error)
            return try await body()
        }
    }
}
