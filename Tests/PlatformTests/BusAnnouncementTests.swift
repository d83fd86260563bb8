import Foundation
import Testing

@testable import Platform

/// What the publisher puts on the bus: events up to 16 KiB whole, longer ones announced
/// without their data (the bus takes frames of 64 KiB at most; subscribers fetch events
/// from their source).
@Suite("Bus announcements")
struct BusAnnouncementTests {
    @Test("a long event goes on the bus without its data, with its source, seq, type and time, and says so")
    func longEventAnnounced() throws {
        let long = Event(source: "reminders", seq: 42, type: "reminders.changed", at: "2026-11-27T05:00:00.000Z", data: ["notes": .string(String(repeating: "x", count: 40_000))])
        #expect(long.encoded.count > EventPublisher.maxBusEventBytes)
        let announcement = EventPublisher.announcement(of: long.encoded)
        #expect(announcement.count < 1_024)
        let value = try JSONParser.parse(announcement)
        let event = try Event(json: value)
        #expect(event.source == "reminders" && event.seq == 42 && event.type == "reminders.changed" && event.at == long.at)
        #expect(event.data == .null)
        #expect(value["truncated"] == true)
    }
}
