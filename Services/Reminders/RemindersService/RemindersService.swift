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

    /// Everything the runtime needs to run the service.
    public static var definition: ServiceDefinition {
        ServiceDefinition(
            name: name,
            summary: """
                The Reminder app (spec 003) and the fitness assistant's schedule (spec 004): reminders with title, notes, category, \
                importance, an image and a notification kind, at a date and time in an IANA zone, floating (following the device's zone) \
                or all-day; RFC 5545 recurrence (RRULE subset, EXDATE, SKIP); alerts with lead times, repeats until done, snooze; \
                active, completed and archived lists sorted by next occurrence, FTS5 search, history, widget upcoming; beautiful dates \
                and holiday catalogs (RU, DE, US, GB) found and subscribed to; birthday greetings and congratulations for others; the \
                training schedule; settings shared by every device; offline sync (reminders.changes, client ids, per-field merge); \
                .ics import and export. The scheduler fires each alert once (reminders.due), also across restarts.
                """,
            durability: .full,
            operations: ReminderOperations().all + ReminderQueries().all + SettingsOperations().all + ScheduleOperations().all
                + SubscriptionOperations().all + CalendarFileOperations().all + [RemindersChanges.operation]
                // Reminder images; ids are the capability to read them.
                + MediaOperations.operations(service: name, putAuth: .authenticated, getAuth: .authenticated),
            events: RemindersEvents.descriptions,
            subscriptions: [AccountEvents.subscription],
            migrations: { RemindersMigrations.register(in: &$0) },
            timers: [ReminderScheduler.handler, ReminderScheduler.snoozeHandler, SubscriptionOperations.topUpHandler, FollowClock.handler])
    }
}
