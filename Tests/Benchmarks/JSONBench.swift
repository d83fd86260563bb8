import ArgumentParser
import Foundation
import Platform

/// The wire's JSON path against Foundation's, on realistic envelopes: the request of a
/// `booking.create`, its typed input, and the booking it answers with.
struct JSONBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "json", abstract: "JSONParser and the tree coders against JSONSerialization, JSONDecoder and JSONEncoder.")

    @Option(help: "Iterations per measurement.")
    var iterations: Int = 200_000

    struct CreateInput: Codable, Sendable {
        var cable: String
        var start: String
    }

    struct Envelope: Codable, Sendable {
        var id: String
        var op: String
        var token: String?
        var idem: String?
        var data: CreateInput
    }

    struct Money: Codable, Sendable {
        var minor: Int64
        var currency: String
    }

    /// The shape of booking's reply (BookingView).
    struct Booking: Codable, Sendable {
        var id: String
        var userId: String
        var cable: String
        var date: String
        var localStart: String
        var localEnd: String
        var start: String
        var end: String
        var status: String
        var paidWith: String
        var price: Money
        var sanction: String?
        var freeCancellationUntil: String
        var createdAt: String
        var cancelledAt: String?
    }

    func run() throws {
        let token = "eyJhbGciOiJFZERTQSIsImtpZCI6ImsxIiwidHlwIjoiSldUIn0." + String(repeating: "x", count: 180) + "." + String(repeating: "y", count: 86)
        let request = Data(
            #"{"id":"c-1042","op":"booking.create","token":"\#(token)","idem":"b-1042","data":{"cable":"cable-1","start":"2026-11-23T07:00:00.000Z"}}"#
                .utf8)
        let booking = Booking(
            id: "bkg_0123456789abcdef0123", userId: "usr_0123456789abcdef", cable: "cable-1", date: "2026-11-23", localStart: "10:00",
            localEnd: "10:30", start: "2026-11-23T07:00:00.000Z", end: "2026-11-23T07:30:00.000Z", status: "booked", paidWith: "session",
            price: Money(minor: 2500, currency: "BYN"), sanction: nil, freeCancellationUntil: "2026-11-23T05:00:00.000Z",
            createdAt: "2026-11-22T10:00:00.000Z", cancelledAt: nil)
        let foundationEncoder = JSONEncoder()
        foundationEncoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let foundationDecoder = JSONDecoder()

        print("JSON benchmark: \(iterations) iterations each, one thread; the request is \(request.count) bytes")
        print("measure                                                       ns/op")
        func measure(_ name: String, _ body: () throws -> Void) rethrows { try measureNanoseconds(name, iterations: iterations, body) }

        // Reading a request: the tree (what the gateway and the services need) ...
        try measure("parse the request: JSONParser -> JSONValue") { _ = try JSONParser.parse(request) }
        try measure("parse the request: JSONSerialization -> Any") { _ = try JSONSerialization.jsonObject(with: request) }
        try measure("the gateway's read of the head: parseHead") { _ = try RequestEnvelope.parseHead(request) }
        // ... then the typed input, or everything typed in one go with Foundation.
        try measure("request + typed input: RequestEnvelope.parse + JSONValueDecoder") {
            let envelope = try RequestEnvelope.parse(request)
            _ = try JSONValueDecoder().decode(CreateInput.self, from: envelope.data)
        }
        try measure("request + typed input: JSONDecoder (typed envelope)") { _ = try foundationDecoder.decode(Envelope.self, from: request) }
        // Writing the reply.
        try measure("encode the booking: JSONValueEncoder + serialized") { _ = try JSONValueEncoder().encode(booking).serialized }
        try measure("encode the booking: JSONEncoder, sorted keys") { _ = try foundationEncoder.encode(booking) }
        let bookingBytes = try WireJSON.encode(booking)
        try measure("decode the booking: JSONParser + JSONValueDecoder (bytes)") { _ = try WireJSON.decode(Booking.self, from: bookingBytes) }
        try measure("decode the booking: JSONDecoder (bytes)") { _ = try foundationDecoder.decode(Booking.self, from: bookingBytes) }
        // The hops around a request, without the sockets: what the gateway does between
        // reading a client's frames and sending them on, and what a service does between
        // reading them and sending the reply (the booking) back.
        let identity = Data([0, 0x80, 0, 0x41, 0xA7]), tag = Data(repeating: 7, count: 8)
        let clientFrames = [identity, Data(), request]
        try measure("gateway hop: open, read the head, pack for the service") {
            let (frames, _) = PackedFrames.open(clientFrames)
            guard case .success(let read) = IncomingRequest.readHead(frames, maxBytes: 1 << 20), !InternalOperations.contains(read.head.op)
            else { throw ServiceError.badRequest("the benchmark request did not read") }
            let clientFrame = Data((ClientAddress.framePrefix + "127.0.0.1").utf8)
            _ = PackedFrames.pack([tag, clientFrame] + frames)
        }
        let atService = [Data("gw-1".utf8), PackedFrames.pack([tag, Data((ClientAddress.framePrefix + "127.0.0.1").utf8)] + clientFrames)]
        try measure("service hop: open, read the request, pack the reply") {
            let (frames, packed) = PackedFrames.open(atService)
            guard case .success(let read) = IncomingRequest.read(frames, maxBytes: 1 << 20), ClientAddress.find(in: read.envelope) != nil
            else { throw ServiceError.badRequest("the benchmark request did not read") }
            _ = PackedFrames.reply(envelope: read.envelope, Reply.success(id: read.request.id, data: bookingBytes), packed: packed)
        }
        try measure("idempotency hash of data as sent") { _ = try RequestEnvelope.parse(request).requestHash }
        measure("Instant.format") { _ = Instant.format(epochMilliseconds: 1_795_341_600_123) }
        measure("Instant.parse") { _ = Instant.parse("2026-11-23T07:00:00.000Z") }
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        measure("Date.ISO8601FormatStyle.parse (the old Instant.parse)") { _ = try? style.parse("2026-11-23T07:00:00.000Z") }
    }
}

/// Runs `body` `iterations` times after a tenth as many to warm up, and prints the
/// nanoseconds per call beside `name`.
func measureNanoseconds(_ name: String, iterations: Int, _ body: () throws -> Void) rethrows {
    for _ in 0..<(iterations / 10) { try body() }
    let started = ContinuousClock.now
    for _ in 0..<iterations { try body() }
    let elapsed = ContinuousClock.now - started
    let nanoseconds = (Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9) / Double(iterations)
    print(name.padding(toLength: 60, withPad: " ", startingAt: 0), String(format: "%6.0f", nanoseconds))
}
