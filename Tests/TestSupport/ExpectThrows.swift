import Testing

// `#expect(throws:)` and `#require(throws:)` return the thrown error only from Swift 6.1 on; on 6.0
// (Debian 13's swiftlang) they return Void. These functions return it on both and record an issue
// at the caller's line when nothing, or an error of another type, was thrown.

/// Runs `body` (its result is ignored) and returns the `E` it threw, or nil after recording an issue.
@discardableResult
package func expectThrows<E: Error, R>(
    _ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) -> E? {
    do {
        _ = try body()
    } catch let error as E {
        return error
    } catch {
        Issue.record("expected \(E.self) to be thrown, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
    Issue.record("expected \(E.self) to be thrown, nothing was", sourceLocation: sourceLocation)
    return nil
}

/// Runs `body` (its result is ignored) and returns the `E` it threw, or nil after recording an issue.
@discardableResult
package func expectThrows<E: Error, R: Sendable>(
    _ type: E.Type, isolation: isolated (any Actor)? = #isolation, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> E? {
    do {
        _ = try await body()
    } catch let error as E {
        return error
    } catch {
        Issue.record("expected \(E.self) to be thrown, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
    Issue.record("expected \(E.self) to be thrown, nothing was", sourceLocation: sourceLocation)
    return nil
}

/// Runs `body` (its result is ignored) and returns the `E` it threw; otherwise records an issue and ends the test.
package func requireThrows<E: Error, R>(
    _ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) throws -> E {
    let error = expectThrows(type, sourceLocation: sourceLocation, body)
    return try #require(error, sourceLocation: sourceLocation)
}
