extension RequestContext {
    /// The media files of the service serving this request (``MediaStore``), beside its
    /// database in the data folder.
    public func mediaStore() throws -> MediaStore {
        MediaStore(service: String(op.prefix { $0 != "." }), databasePath: try database().path)
    }
}
