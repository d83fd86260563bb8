import Foundation
import GRDB
import Platform

/// The booking service (WAKEPARKBY): training slots on the park's cables, prepaid passes,
/// cancellation rules and the staff's day.
///
/// Durability: `synchronous=FULL`, because bookings and the pass ledger must survive
/// power loss.
public enum BookingService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "booking"

    static let bookingEvent = JSONSchema.object(
        [
            "bookingId": .string(), "userId": .string(), "cable": .string(), "start": .string(format: .dateTime),
            "end": .string(format: .dateTime), "date": .string(format: .date), "localStart": .string(format: .time), "status": .string(),
            "reason": .string(),
        ], required: ["bookingId", "userId", "cable", "start", "end", "status"])

    static let events = [
        EventDescription("booking.created", summary: "A rider booked a slot (reminders can notify two hours before).", data: bookingEvent),
        EventDescription("booking.cancelled", summary: "A rider cancelled in time; the session or money was returned.", data: bookingEvent),
        EventDescription("booking.late_cancelled", summary: "A rider cancelled late; the booking's sanction applies.", data: bookingEvent),
        EventDescription("booking.cancelled_by_park", summary: "The park cancelled a booking; full refund, the rider should be notified.", data: bookingEvent),
        EventDescription("booking.attended", summary: "Staff marked the rider present.", data: bookingEvent),
        EventDescription("booking.no_show", summary: "Staff marked the rider absent; the booking's sanction applies.", data: bookingEvent),
        EventDescription("booking.sanction_changed", summary: "Staff waived or applied a sanction.", data: bookingEvent),
        EventDescription(
            "booking.pass.topped_up", summary: "A pass top-up settled.",
            data: .object(
                ["userId": .string(), "payment": .string(), "package": .string(), "sessions": .integer(), "credit": .integer()],
                required: ["userId", "payment", "package"])),
        PaymentExpiry.event,
    ]

    /// Removes a deleted user's personal link (WAKEPARKBY: the account and what hangs off
    /// it go; the park keeps its books). In one transaction: future bookings are cancelled
    /// with their refunds (places freed, `booking.cancelled`), the pass is closed by a
    /// `closure` entry taking out what is left, so it is zero and equal to its ledger, and
    /// then bookings, ledger, payments and staff actions keep ``DeletedRider`` in place of
    /// the user id. A booking already started stays as it is; staff may still mark or
    /// cancel it, which changes its status only (nothing is posted for an anonymous id),
    /// and a payment that settles later is recorded `unclaimed`, not credited.
    static func userDeleted(_ state: BookingState) -> EventSubscription {
        EventSubscription(source: "auth", types: ["auth.user.deleted"]) { db, event in
            guard let user = event.data["userId"]?.stringValue, user != DeletedRider.id else { return }
            let now = Instant.format(Date())
            let future = try Row.fetchAll(
                db, sql: "SELECT * FROM booking WHERE user_id = ? AND status = 'booked' AND start_at > ?", arguments: [user, now]
            ).map(BookingView.init(row:))
            for booking in future {
                try PassLedger.refund(db, booking, at: now, reason: "account deleted")
                try db.execute(
                    sql: "UPDATE booking SET status = 'cancelled', cancelled_at = ?, change_version = ? WHERE id = ?",
                    arguments: [now, try ChangeFeed.stamp(db), booking.id])
                // Published after the commit, already without the user id.
                var cancelled = booking
                (cancelled.userId, cancelled.status, cancelled.cancelledAt) = (DeletedRider.id, BookingStatus.cancelled.rawValue, now)
                try Outbox.append(db, type: "booking.cancelled", data: cancelled.eventData)
            }
            try PassLedger.close(db, user: user, at: now)
            for table in ["booking", "ledger", "payment", "staff_action"] {
                try db.execute(sql: "UPDATE \(table) SET user_id = ? WHERE user_id = ?", arguments: [DeletedRider.id, user])
            }
            try db.execute(sql: "DELETE FROM pass WHERE user_id = ?", arguments: [user])
            try MediaCatalog.forget(db, user: user)
            try IdempotencyStore.forget(db, user: user)
            // Events already stored (events.replay) keep what happened, not to whom.
            try Outbox.redact(db, user: user, as: DeletedRider.id)
            // Last: the refunds and the closure above post for the user.
            try DeletedUsers.record(db, user: user, at: now)
            state.changed(db)
        }
    }

    /// The definition; riders' names come from auth through `auth`.
    public static func definition(auth: Link?, settings: BookingSettings = BookingSettings()) -> ServiceDefinition {
        let directory = RiderDirectory(client: auth.map { ServiceClient(link: $0, name: "booking-riders") })
        let state = BookingState()
        let payments: (any PaymentProvider)? =
            switch settings.provider {
            case .dev: DevPaymentProvider()
            case .http:
                settings.paymentURL.map { HTTPPaymentProvider(endpoint: $0, callbackURL: settings.callbackURL, token: settings.paymentToken) }
            case nil: nil
            }
        return ServiceDefinition(
            name: name,
            summary:
                "WAKEPARKBY: training slots on the park's cables (reverses), prepaid passes, cancellation rules, the staff's day, pictures of cables and packages.",
            durability: .full,
            operations: RiderOperations(payments: payments, state: state, paymentExpirySeconds: settings.paymentExpirySeconds).all
                + StaffOperations(riders: directory, state: state).all
                + DeskOperations(riders: directory, state: state).all
                // Pictures of cables and packages: staff upload them, the app shows them to anyone.
                + MediaOperations.operations(service: name, putAuth: StaffOperations.staff, getAuth: .public)
                + [BookingChanges.operation],
            events: events,
            subscriptions: [userDeleted(state)],
            migrations: { BookingMigrations.register(in: &$0) },
            workers: { pool, logger in
                guard settings.provider == .http, let secret = settings.callbackSecret else {
                    switch settings.provider {
                    case .dev: logger.notice("payments: the dev provider settles every top-up at once, for development and tests only")
                    default: logger.notice("payments: no provider configured (BACKEND_BOOKING_PAYMENT_PROVIDER); top-ups answer unavailable")
                    }
                    return []
                }
                return [
                    PaymentCallbacks.server(
                        host: settings.callbackHost, port: settings.callbackPort, secret: secret, pool: pool, state: state, logger: logger)
                ]
            },
            timers: [PaymentExpiry.handler])
    }

    /// The definition for the process: settings from `BACKEND_BOOKING_*`.
    public static func definition(configuration: PlatformConfiguration) -> ServiceDefinition {
        do {
            return definition(auth: try configuration.links(as: name).service("auth"), settings: try BookingSettings.fromEnvironment())
        } catch {
            FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
            exit(2)
        }
    }
}

/// Booking's own settings (README, "Booking").
public struct BookingSettings: Sendable {
    /// Which payment provider takes top-ups (`BACKEND_BOOKING_PAYMENT_PROVIDER`).
    public enum Provider: String, Sendable {
        /// Settles every top-up at once, for development and tests: chosen explicitly.
        case dev
        /// A real provider at ``paymentURL``.
        case http
    }

    /// The provider; `nil` (none configured) answers top-ups `unavailable`.
    public var provider: Provider?
    /// The `http` provider's endpoint (`BACKEND_BOOKING_PAYMENT_URL`).
    public var paymentURL: String?
    /// Its bearer token (`BACKEND_BOOKING_PAYMENT_TOKEN`).
    public var paymentToken: String?
    /// Where the provider calls back (`BACKEND_BOOKING_CALLBACK_URL`).
    public var callbackURL = "http://127.0.0.1:5680/payments/callback"
    /// What the callback listener binds (`BACKEND_BOOKING_CALLBACK_BIND`, host:port).
    public var callbackHost = "127.0.0.1"
    public var callbackPort = 5680
    /// The secret the provider signs callbacks with (`BACKEND_BOOKING_CALLBACK_SECRET`).
    public var callbackSecret: String?
    /// A top-up still pending after this many seconds expires
    /// (`BACKEND_BOOKING_PAYMENT_EXPIRY_SECONDS`, 1 to 604,800; 30 minutes by default).
    public var paymentExpirySeconds = 1_800

    public init() {}

    /// Settings with the `dev` provider, as the local stack runner and the tests choose.
    public static var dev: BookingSettings {
        var settings = BookingSettings()
        settings.provider = .dev
        return settings
    }

    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> BookingSettings {
        var settings = BookingSettings()
        settings.paymentURL = environment["BACKEND_BOOKING_PAYMENT_URL"].flatMap { $0.isEmpty ? nil : $0 }
        settings.paymentToken = environment["BACKEND_BOOKING_PAYMENT_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        if let value = environment["BACKEND_BOOKING_CALLBACK_URL"], !value.isEmpty { settings.callbackURL = value }
        if let value = environment["BACKEND_BOOKING_CALLBACK_BIND"], !value.isEmpty {
            let parts = value.split(separator: ":")
            guard parts.count == 2, let port = Int(parts[1]), (1...65_535).contains(port) else {
                throw ConfigurationError("BACKEND_BOOKING_CALLBACK_BIND must be host:port")
            }
            settings.callbackHost = String(parts[0])
            settings.callbackPort = port
        }
        settings.callbackSecret = environment["BACKEND_BOOKING_CALLBACK_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        if let value = environment["BACKEND_BOOKING_PAYMENT_EXPIRY_SECONDS"], !value.isEmpty {
            guard let seconds = Int(value), (1...604_800).contains(seconds) else {
                throw ConfigurationError("BACKEND_BOOKING_PAYMENT_EXPIRY_SECONDS must be a number of seconds from 1 to 604800")
            }
            settings.paymentExpirySeconds = seconds
        }
        switch environment["BACKEND_BOOKING_PAYMENT_PROVIDER"] ?? "" {
        case "": settings.provider = settings.paymentURL == nil ? nil : .http
        case "dev": settings.provider = .dev
        case "http": settings.provider = .http
        default: throw ConfigurationError("BACKEND_BOOKING_PAYMENT_PROVIDER must be dev or http")
        }
        if settings.provider == .http && settings.paymentURL == nil {
            throw ConfigurationError("BACKEND_BOOKING_PAYMENT_PROVIDER=http needs BACKEND_BOOKING_PAYMENT_URL")
        }
        if settings.provider == .dev && settings.paymentURL != nil {
            throw ConfigurationError("BACKEND_BOOKING_PAYMENT_PROVIDER=dev with BACKEND_BOOKING_PAYMENT_URL set: choose one")
        }
        if settings.paymentURL != nil && settings.callbackSecret == nil {
            throw ConfigurationError("BACKEND_BOOKING_PAYMENT_URL needs BACKEND_BOOKING_CALLBACK_SECRET to verify callbacks")
        }
        return settings
    }
}
