import Foundation

/// Writes each message as `<id>.json` into a folder (the default for local runs; tests
/// read the files), as `render` makes it. Writing the same id twice leaves one file:
/// duplicates vanish.
public struct FileTransport: DeliveryTransport {
    public let channel: DeliveryChannel
    let directory: URL
    let render: @Sendable (DeliveryMessage) throws -> Data

    /// Delivers `channel`'s messages into `directory` (created when needed).
    public init(channel: DeliveryChannel, directory: URL, render: @escaping @Sendable (DeliveryMessage) throws -> Data) {
        self.channel = channel
        self.directory = directory
        self.render = render
    }

    public func send(_ message: DeliveryMessage) throws -> DeliveryOutcome {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let data = try render(message)
        // Write then rename, so a reader never sees half a message.
        let temporary = directory.appendingPathComponent(".\(message.id).tmp")
        try data.write(to: temporary)
        let target = directory.appendingPathComponent("\(message.id).json")
        guard rename(temporary.path, target.path) == 0 else {
            return .retry(reason: "cannot write \(target.path): errno \(errno)")
        }
        return .delivered
    }
}
