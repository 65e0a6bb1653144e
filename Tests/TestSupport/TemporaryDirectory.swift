import Foundation

/// A fresh directory under the system temporary directory, removed when released.
package final class TemporaryDirectory: Sendable {
    package let url: URL
    package var path: String { url.path }

    package init(prefix: String = "blebridge-test") throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        self.url = url
    }

    package func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    @discardableResult
    package func write(_ name: String, _ contents: String) throws -> URL {
        let file = file(name)
        try contents.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
