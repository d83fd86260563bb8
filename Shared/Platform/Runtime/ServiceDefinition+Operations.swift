extension ServiceDefinition {
    /// Every operation a runtime serves for this definition: its own and the built-in
    /// `health`, `describe` and `events.replay`, each with its schemas.
    ///
    /// For tools and tests that need an operation's declared schemas without running the
    /// service (the test fixtures check every reply against its response schema).
    public var servedOperations: [ServiceOperation] {
        BuiltinOperations.complete(self, startedAt: .now)
    }
}
