import Platform

/// The savings service: BuckStash. People save money by a method they choose (equal
/// installments, the 52-week challenge and its reverse, a share of income, a fixed
/// amount); we give them an exact plan, rebalance it after every deposit so it still
/// reaches its target by its deadline, remind them of installments, and keep their
/// statistics and history. The money itself never passes through us.
///
/// Durability: `synchronous=FULL`, because plans and deposits must survive power loss.
public enum SavingsService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "savings"

    /// Everything the runtime needs to run the service.
    public static var definition: ServiceDefinition {
        ServiceDefinition(
            name: name,
            summary: """
                BuckStash (spec 001): the method catalog with presentations (admin-edited); plans previewed and started with \
                installments that sum exactly to the target in integer minor units; deposits (idempotent, undoable) that rebalance \
                the rest so the plan still reaches its target by its deadline, or say the nearest date it can; pause, resume, \
                cancel; statistics per plan and per currency, the history, every deposit; installment reminders at the user's \
                hour in their zone (savings.installment.due, on durable timers).
                """,
            durability: .full,
            operations: MethodOperations().all + PlanOperations().all + DepositOperations().all + StatsOperations().all
                // Slide images (admins); ids are the capability to read them.
                + MediaOperations.operations(service: name, putAuth: MethodOperations.admin, getAuth: .public),
            events: SavingsEvents.descriptions,
            subscriptions: [UserDeletion.subscription],
            migrations: { SavingsMigrations.register(in: &$0) },
            timers: [InstallmentReminders.handler])
    }
}
