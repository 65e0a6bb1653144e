/// The product's version, printed by `blebridge --version` and published in `bridge/info`.
package enum BLEBridgeVersion {
    package static let string = "0.1.0"
}
