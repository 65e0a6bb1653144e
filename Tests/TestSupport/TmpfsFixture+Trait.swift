import Testing

extension TmpfsFixture {
    /// The reason a suite of full-disk tests is skipped, for `.enabled(if:_:)`. Built here rather
    /// than interpolated in the trait itself: Swift 6.0.3's type checker crashes (an assertion in
    /// `visitTapExpr`) on string interpolation inside a `@Suite` attribute.
    package static var skipReason: Comment {
        Comment(rawValue: "cannot mount a tmpfs: \(mountError ?? "")")
    }
}
