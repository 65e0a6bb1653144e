import Foundation
import TestSupport
import Testing

/// `deploy/debian/sysroot-admindir`: the dpkg database dpkg-shlibdeps needs for a foreign-arch
/// sysroot that was only extracted (no database), made from the .debs left in its apt cache.
@Suite struct SysrootAdmindirTests {
    @discardableResult
    private func run(_ executable: String, _ arguments: [String]) async throws -> String {
        let result = try await ChildProcess.run(executable, arguments, timeout: .seconds(60))
        guard result.status == 0 else {
            throw FixtureError(
                "\(executable) \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return result.stdout
    }

    /// A one-library arm64 package like Debian's: a Multi-Arch: same library with a shlibs file.
    private func makeLibraryPackage(in directory: TemporaryDirectory) throws -> URL {
        let tree = directory.file("libdemo1")
        let fileManager = FileManager.default
        try fileManager.createDirectory(
            at: tree.appendingPathComponent("DEBIAN"), withIntermediateDirectories: true)
        try fileManager.createDirectory(
            at: tree.appendingPathComponent("usr/lib/aarch64-linux-gnu"), withIntermediateDirectories: true)
        try Data("not really a library".utf8).write(
            to: tree.appendingPathComponent("usr/lib/aarch64-linux-gnu/libdemo.so.1"))
        try """
        Package: libdemo1
        Version: 1.2-3
        Architecture: arm64
        Multi-Arch: same
        Maintainer: Test <test@example.org>
        Description: demo library

        """.write(to: tree.appendingPathComponent("DEBIAN/control"), atomically: true, encoding: .utf8)
        try "libdemo 1 libdemo1 (>= 1.2)\n".write(
            to: tree.appendingPathComponent("DEBIAN/shlibs"), atomically: true, encoding: .utf8)
        return tree
    }

    @Test func makesADatabaseFromTheSysrootsPackages() async throws {
        let directory = try TemporaryDirectory(prefix: "sysroot")
        let tree = try makeLibraryPackage(in: directory)
        let archives = directory.file("sysroot/var/cache/apt/archives")
        try FileManager.default.createDirectory(at: archives, withIntermediateDirectories: true)
        try await run(
            "dpkg-deb",
            [
                "--root-owner-group", "--build", tree.path,
                archives.appendingPathComponent("libdemo1_1.2-3_arm64.deb").path,
            ])

        let admindir = try await run(
            RepositoryPaths.file("deploy/debian/sysroot-admindir"),
            [directory.file("sysroot").path, "arm64", directory.file("admindir").path]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(admindir == directory.file("admindir").path)

        // What dpkg-shlibdeps asks: who owns the library, and where its shlibs file is.
        let owner = try await run(
            "dpkg-query", ["--admindir=\(admindir)", "--search", "/usr/lib/aarch64-linux-gnu/libdemo.so.1"])
        #expect(owner == "libdemo1:arm64: /usr/lib/aarch64-linux-gnu/libdemo.so.1\n")
        let shlibs = try await run("dpkg-query", ["--admindir=\(admindir)", "--control-path", "libdemo1", "shlibs"])
        #expect(
            try String(contentsOfFile: shlibs.trimmingCharacters(in: .whitespacesAndNewlines), encoding: .utf8)
                == "libdemo 1 libdemo1 (>= 1.2)\n")
    }

    @Test func refusesASysrootWithNeitherDatabaseNorPackages() async throws {
        let directory = try TemporaryDirectory(prefix: "sysroot-empty")
        let result = try await ChildProcess.run(
            RepositoryPaths.file("deploy/debian/sysroot-admindir"),
            [directory.path, "arm64", directory.file("admindir").path], timeout: .seconds(30))
        #expect(result.status == 66 && result.stderr.contains("neither a dpkg database"), "\(result.stderr)")
    }
}
