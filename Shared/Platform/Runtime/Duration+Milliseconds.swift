extension Duration {
    /// The duration in whole milliseconds, rounded down, never negative.
    public var wholeMilliseconds: Int {
        let (seconds, attoseconds) = components
        return max(0, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }

    /// The duration in whole microseconds, rounded down, never negative.
    public var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }

    /// The duration in milliseconds as a fraction, for logs and benchmarks.
    public var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
