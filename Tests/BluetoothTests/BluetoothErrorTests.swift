import Bluetooth
import Testing

@Suite struct BluetoothErrorTests {
    @Test func isCatchableByCode() {
        func fail() throws { throw BluetoothError(.connectionTimeout) }
        var caught = false
        do { try fail() } catch let error as BluetoothError where error.code == .connectionTimeout {
            caught = true
        } catch {}
        #expect(caught)
    }

    @Test func everyCodeHasAMessageAndATransienceClass() {
        for code in BluetoothError.Code.allCases {
            #expect(!code.defaultMessage.isEmpty)
            #expect(BluetoothError(code).message == code.defaultMessage)
        }
        #expect(BluetoothError.Code.connectionTimeout.isTransient)
        #expect(BluetoothError.Code.peripheralDisconnected.isTransient)
        #expect(!BluetoothError.Code.operationNotSupported.isTransient)
        #expect(!BluetoothError.Code.insufficientAuthentication.isTransient)
    }

    @Test func managerStatesGiveTheirOperationError() {
        #expect(ManagerState.poweredOn.operationError == nil)
        #expect(ManagerState.poweredOff.operationError?.code == .notPoweredOn)
        #expect(ManagerState.unauthorized.operationError?.code == .unauthorized)
        #expect(ManagerState.resetting.operationError?.code == .resetting)
        #expect(ManagerState.unsupported.operationError?.code == .unsupported)
    }

    @Test func disconnectReasonsFailPendingOperations() {
        #expect(DisconnectReason.remote.pendingOperationError.code == .peripheralDisconnected)
        #expect(DisconnectReason.adapterPoweredOff.pendingOperationError.code == .notPoweredOn)
    }
}
