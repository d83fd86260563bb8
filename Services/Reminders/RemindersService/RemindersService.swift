import Foundation
import Platform

/// The reminders service: the Reminder app (spec 003, section 4.1) and the fitness
/// assistant's training schedule (spec 004). Recurring reminders with RFC 5545 rules
/// across time zones and DST, alerts fired exactly once by a scheduler on durable timers
/// (`reminders.due`, which the notifications service turns into pushes), beautiful dates,
/// holiday catalogs, greetings, app settings, offline sync and iCalendar files.
///
/// Durability: `synchronous=FULL`, because reminders people set must survive power loss.
public enum RemindersService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "reminders"

    /// Everything the runtime needs to run the service, with push settings from the
    /// environment (`BACKEND_REMINDERS_PUSH_*`; files under `BACKEND_DATA_DIR`'s `push`).
    public static var definition: ServiceDefinition {
        let environment = ProcessInfo.processInfo.environment
        return definition(dataDirectory: URL(fileURLWithPath: environment["BACKEND_DATA_DIR"] ?? "data", isDirectory: true))
    }

    /// The definition for the process, its push files under the configured data folder.
    public static func definition(configuration: PlatformConfiguration) -> ServiceDefinition {
        definition(dataDirectory: configuration.dataDirectoryURL)
    }

    static func definition(dataDirectory: URL) -> ServiceDefinition {
        let push: PushSettings
        do {
            push = try PushSettings(environment: ProcessInfo.processInfo.environment, dataDirectory: dataDirectory)
        } catch {
            FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
            exit(2)
        }
        return definition(push: push)
    }

    static func definition(push: PushSettings) -> ServiceDefinition {
        ServiceDefinition(
            name: name,
            summary: """
                The Reminder app (spec 003) and the fitness assistant's schedule (spec 004): reminders in an IANA zone, floating or \
                all-day, with RFC 5545 recurrence, alerts with lead times, repeats and snooze; lists, FTS5 search, history, widget; \
                beautiful dates and holiday catalogs (RU, DE, US, GB); greetings; the training schedule; shared settings; offline \
                sync (reminders.changes); .ics import and export. The scheduler fires each alert once (reminders.due). Push \
                notifications for all five apps: devices per app (bundle id as topic), preferences with quiet hours, templates per \
                kind and language, history, broadcasts; from due alerts and goals, booking, savings and auth events; sent from an \
                outbox through files or a Gorush gateway, urgent before bulk, refused tokens disabled (dead letters).
                """,
            durability: .full,
            operations: ReminderOperations().all + ReminderQueries().all + SettingsOperations().all + ScheduleOperations().all
                + SubscriptionOperations().all + CalendarFileOperations().all + [RemindersChanges.operation]
                + NotificationOperations().all + NotificationAdminOperations().all + DeliveryOperations.operations(outbox: Notifier.outbox)
                // Reminder images; ids are the capability to read them.
                + MediaOperations.operations(service: name, putAuth: .authenticated, getAuth: .authenticated),
            events: RemindersEvents.descriptions,
            subscriptions: [AccountEvents.subscription] + NotificationSources.subscriptions,
            migrations: { RemindersMigrations.register(in: &$0) },
            prepare: { pool in
                try NotificationHistoryPruning.arm(pool)
                try RenderedReminders.start(for: pool)
            },
            workers: { pool, logger in
                [
                    DeliveryWorker(
                        pool: pool, outbox: Notifier.outbox, transports: push.transports, settings: push.delivery, logger: logger,
                        outcomeHook: Notifier.recordOutcomes)
                ]
            },
            timers: [
                ReminderScheduler.handler, ReminderScheduler.snoozeHandler, SubscriptionOperations.topUpHandler, FollowClock.handler,
                NotificationSources.bookingSoonHandler, Broadcasts.handler, NotificationHistoryPruning.handler,
            ])
    }
}
