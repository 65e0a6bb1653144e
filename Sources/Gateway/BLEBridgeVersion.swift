/// The product's version, printed by `blebridge --version` and published in `bridge/info`.
public enum BLEBridgeVersion {
    public static let string = "0.1.0"
}
