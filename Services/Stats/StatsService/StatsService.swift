import Platform

/// The stats service: the fitness assistant (spec 004: Home, Gym, Stats). An admin-managed
/// exercise catalog and slogans; the user's preferences; workouts of N exercises chosen
/// one at a time with body parts balanced, recommended repetitions, a server-kept
/// countdown and a score; statistics for a week, two weeks or a month in the user's zone
/// (the daily performance series, shares per body part and motor ability, key facts).
///
/// Durability: `synchronous=FULL`, because workouts people log must survive power loss.
public enum StatsService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "stats"

    /// Everything the runtime needs to run the service.
    public static var definition: ServiceDefinition {
        let cache = ReadCache()
        return ServiceDefinition(
            name: name,
            summary: """
                The fitness assistant (spec 004): the exercise catalog (admin-managed: names, body part, motor ability, base repetitions \
                per level, instruction image, video link) and motivational slogans; preferences (level, goal, countdown, exercises per \
                workout, planned progression, zone) and a history reset; workouts of N exercises chosen at random with body parts \
                balanced, recommended repetitions, completion only after the countdown (server time), skips, a score; workouts done \
                offline uploaded later (checked for plausibility, every one accepted, already there or refused with reasons); statistics \
                for a week, two weeks or a month in the user's zone: the performance series, shares per body part and motor \
                ability (summing to 100), key facts with streaks and the change against the period before, and SVG charts; the other \
                apps' statistics from their events (savings, bookings, goals per month; admins' registrations, activity and goals by \
                state per day).
                """,
            durability: .full,
            operations: CatalogOperations().all + PreferenceOperations().all + WorkoutOperations().all + SyncOperations().all
                + StatisticsOperations(cache: cache).all + OverviewOperations().all
                // Instruction graphics (admins); ids are the capability to read them.
                + MediaOperations.operations(service: name, putAuth: CatalogOperations.admin, getAuth: .authenticated),
            events: StatsEvents.descriptions,
            subscriptions: CrossAppEvents.all,
            migrations: { StatsMigrations.register(in: &$0) },
            // The period statistics' answers, kept until the next commit (a second at most).
            prepare: { pool in pool.add(transactionObserver: cache.observer, extent: .databaseLifetime) })
    }
}
