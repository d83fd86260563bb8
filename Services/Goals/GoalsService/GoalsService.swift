import Platform

/// The goals service: sponsored fitness goals. Recipients set goals and propose a reward,
/// sponsors accept or reject with a counter-proposal, admins write plans and set progress,
/// both sides follow it in a shared feed.
///
/// Durability: `synchronous=FULL`, because goals and promised rewards must survive power loss.
public enum GoalsService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "goals"

    /// Everything the runtime needs to run the service.
    public static var definition: ServiceDefinition {
        let cache = ReadCache()
        return ServiceDefinition(
            name: name,
            summary: """
                Sponsored fitness goals (spec 000, sections 2-9): goal types with admin-edited, versioned settings forms; goals and \
                their sponsorships (offer, accept, reject with a counter-proposal or a request for a new goal, revise, withdraw); \
                fitness profiles with BMI; plans (workouts, nutrition, tips, recommendations) checked off, rescheduled, on a \
                calendar and a dashboard; questionnaires; the pair's activity feed with comments and likes; offline sync \
                (goals.changes, goals.content); tracker imports; admin content, inbox, progress, counts, broadcasts. Beyond the \
                spec: withdrawal of offers and goals, the WHO category of the BMI, imperial units, goal failure by an admin.
                """,
            durability: .full,
            operations: GoalOperations().all + PlanOperations(cache: cache).all + ProfileOperations().all + FeedOperations().all + CatalogOperations().all
                + QuestionnaireOperations().all + ActivityOperations().all + AdminOperations().all
                // Icons (admins), avatars (sponsors), illustrations: ids are the capability to read them.
                + MediaOperations.operations(service: name, putAuth: .authenticated, getAuth: .public) + [GoalsChanges.operation],
            events: GoalEvents.descriptions,
            subscriptions: [UserDeletion.subscription],
            migrations: { GoalsMigrations.register(in: &$0) },
            prepare: { pool in pool.add(transactionObserver: cache.observer, extent: .databaseLifetime) })
    }
}
