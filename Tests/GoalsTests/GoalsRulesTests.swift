import Foundation
import Platform
import Testing

@testable import GoalsService

/// The goals domain's rules, apart from SQL and sockets.
@Suite("Goals rules")
struct GoalsRulesTests {
    // MARK: Lifecycle

    @Test(
        "every sponsorship transition from every state: allowed ones land where the spec says, the others name the current state",
        arguments: [
            (SponsorshipAction.propose, nil as SponsorshipState?, SponsorshipState.proposed as SponsorshipState?),
            (.propose, .withdrawn, .proposed), (.propose, .proposed, nil), (.propose, .rejected, nil), (.propose, .accepted, nil),
            (.accept, .proposed, .accepted), (.accept, .rejected, nil), (.accept, .accepted, nil), (.accept, .withdrawn, nil), (.accept, nil, nil),
            (.reject(.counterGoal), .proposed, .rejected), (.reject(.askNewGoal), .proposed, .rejected), (.reject(.askNewGoal), .rejected, nil),
            (.reject(.counterGoal), .accepted, nil),
            (.revise, .proposed, .proposed), (.revise, .rejected, .proposed), (.revise, .accepted, nil), (.revise, .withdrawn, nil),
            (.withdraw, .proposed, .withdrawn), (.withdraw, .rejected, .withdrawn), (.withdraw, .accepted, nil), (.withdraw, .withdrawn, nil),
        ])
    func sponsorshipTransitions(action: SponsorshipAction, from: SponsorshipState?, expected: SponsorshipState?) {
        switch GoalLifecycle.next(after: action, from: from, goal: .proposed) {
        case .success(let state): #expect(state == expected)
        case .failure(let error):
            #expect(expected == nil, "\(action) from \(String(describing: from)) refused: \(error.message)")
            #expect(error.message.contains(from?.rawValue ?? "not offered"))
            #expect(error.serviceError.code == .conflict)
            #expect(error.serviceError.details["state"] == .string(from?.rawValue ?? "not offered"))
        }
    }

    @Test("a finished goal can be neither offered nor answered", arguments: [GoalState.completed, .failed, .withdrawn])
    func finishedGoalRefuses(goal: GoalState) {
        for action in [SponsorshipAction.propose, .accept, .revise, .withdraw] {
            guard case .failure(let error) = GoalLifecycle.next(after: action, from: .proposed, goal: goal) else {
                Issue.record("\(action) allowed on a \(goal) goal")
                continue
            }
            #expect(error.currentState == goal.rawValue)
        }
    }

    @Test("the goal's state follows its sponsorships; acceptance is never undone")
    func goalStateFollowsSponsorships() {
        #expect(GoalLifecycle.goalState(.draft, sponsorships: []) == .draft)
        #expect(GoalLifecycle.goalState(.draft, sponsorships: [.proposed]) == .proposed)
        #expect(GoalLifecycle.goalState(.proposed, sponsorships: [.rejected]) == .proposed)
        #expect(GoalLifecycle.goalState(.proposed, sponsorships: [.withdrawn]) == .draft)
        #expect(GoalLifecycle.goalState(.proposed, sponsorships: [.rejected, .accepted]) == .active)
        #expect(GoalLifecycle.goalState(.active, sponsorships: [.withdrawn]) == .active)
        #expect(GoalLifecycle.goalState(.completed, sponsorships: [.proposed]) == .completed)
        #expect(GoalLifecycle.goalIsRevisable(.proposed) && !GoalLifecycle.goalIsRevisable(.active))
    }

    @Test("how goals end: completed and failed only when active, withdrawn from any open state")
    func endings() {
        #expect((try? GoalLifecycle.finish(.active, as: .completed).get()) == .completed)
        #expect((try? GoalLifecycle.finish(.active, as: .failed).get()) == .failed)
        #expect((try? GoalLifecycle.finish(.draft, as: .withdrawn).get()) == .withdrawn)
        #expect((try? GoalLifecycle.finish(.draft, as: .completed).get()) == nil)
        #expect((try? GoalLifecycle.finish(.completed, as: .withdrawn).get()) == nil)
        #expect((try? GoalLifecycle.finish(.withdrawn, as: .withdrawn).get()) == nil)
    }

    @Test("a reward follows its goal, and only an earned one can be marked paid")
    func rewards() {
        #expect(RewardStatus.promised.after(goal: .completed) == .earned)
        #expect(RewardStatus.promised.after(goal: .failed) == .forfeited)
        #expect(RewardStatus.promised.after(goal: .withdrawn) == .forfeited)
        #expect(RewardStatus.paid.after(goal: .failed) == .paid)
        #expect((try? RewardStatus.earned.markedPaid().get()) == .paid)
        #expect((try? RewardStatus.promised.markedPaid().get()) == nil)
        #expect((try? RewardStatus.paid.markedPaid().get()) == nil)
        #expect((try? Reward.parse(money: Money(minor: 0, currency: "EUR"), text: nil, field: "reward").get()) == nil)
        #expect((try? Reward.parse(money: nil, text: "  ", field: "reward").get()) == nil)
        #expect((try? Reward.parse(money: Money(minor: 5, currency: "EUR"), text: "x", field: "reward").get()) == nil)
        // Neither is not "both": each problem says what is missing.
        if case .failure(let neither) = Reward.parse(money: nil, text: nil, field: "reward") {
            #expect(neither.fields["reward.money"] == "give money or text")
        } else {
            Issue.record("a reward of neither was accepted")
        }
        #expect((try? Reward.parse(money: nil, text: "a trip", field: "reward").get()) == .text("a trip"))
    }

    // MARK: Body metrics

    @Test("units convert to SI and back, exact at the gram and millimetre")
    func units() throws {
        #expect(Height(180, .cm)?.millimetres == 1_800)
        #expect(Height(1.8, .m)?.millimetres == 1_800)
        #expect(Height(70, .in)?.millimetres == 1_778)
        #expect(Height(1_778 / 25.4, .in)?.inches == 70)
        #expect(Weight(80, .kg)?.grams == 80_000)
        #expect(Weight(176, .lb)?.grams == 79_832)
        #expect(try #require(Weight(grams: 79_832)).pounds == 176)
        #expect(Height(49, .cm) == nil && Height(273, .cm) == nil && Height(.nan, .cm) == nil)
        #expect(Weight(1, .kg) == nil && Weight(700, .kg) == nil && Weight(.infinity, .lb) == nil)
    }

    @Test(
        "the BMI's WHO category is decided on the exact ratio, at every boundary",
        arguments: [
            (1_000, 15_999, BodyMassIndex.Category.severeThinness), (1_000, 16_000, .moderateThinness), (1_000, 18_499, .mildThinness),
            (1_000, 18_500, .normal), (1_000, 24_999, .normal), (1_000, 25_000, .preObese), (1_000, 30_000, .obeseClass1),
            (1_000, 35_000, .obeseClass2), (1_000, 39_999, .obeseClass2), (1_000, 40_000, .obeseClass3),
        ])
    func bmiCategories(heightMillimetres: Int, grams: Int, expected: BodyMassIndex.Category) throws {
        // At 1 m, kg/m² is the weight in kg.
        let index = BodyMassIndex(weight: try #require(Weight(grams: grams)), height: try #require(Height(millimetres: heightMillimetres)))
        #expect(index.category == expected)
    }

    @Test("the BMI people read: 80 kg at 1.80 m is 24.7, normal")
    func bmiValue() throws {
        let index = BodyMassIndex(weight: try #require(Weight(80, .kg)), height: try #require(Height(180, .cm)))
        #expect(index.value == 24.7)
        #expect(index.category == .normal)
    }

    // MARK: Plan

    static func date(_ text: String) -> LocalDate { LocalDate(text)! }

    /// A week: Monday 2027-03-01 ... Sunday 2027-03-07; the plan has workouts on Mon, Wed,
    /// Fri and the next Monday.
    static let plan = [
        PlannedWorkout(id: "mon", date: date("2027-03-01"), done: false), PlannedWorkout(id: "wed", date: date("2027-03-03"), done: false),
        PlannedWorkout(id: "wed-done", date: date("2027-03-03"), done: true), PlannedWorkout(id: "fri", date: date("2027-03-05"), done: false),
        PlannedWorkout(id: "next-mon", date: date("2027-03-08"), done: false),
    ]

    @Test("a plan item's date is within five years of today, both ends included")
    func planDates() {
        let today = Self.date("2027-03-01")
        #expect(PlanDates.problem(Self.date("2022-03-01"), today: today) == nil)
        #expect(PlanDates.problem(Self.date("2032-03-01"), today: today) == nil)
        #expect(PlanDates.problem(Self.date("2022-02-28"), today: today) != nil)
        #expect(PlanDates.problem(Self.date("2032-03-02"), today: today) != nil)
        #expect(PlanDates.problem(Self.date("1900-01-01"), today: today) != nil)
        #expect(PlanDates.problem(Self.date("9999-12-31"), today: today) != nil)
        #expect(PlanDates.utcDay(Date(timeIntervalSince1970: 86_400 * 3 - 1)) == Self.date("1970-01-03"))
        #expect(PlanDates.utcDay(Date(timeIntervalSince1970: -1)) == Self.date("1969-12-31"))
    }

    @Test("moving a day forward shifts every later workout by as many days; what was done that day stays")
    func rescheduleForward() throws {
        let moves = try PlanReschedule.move(Self.plan, from: Self.date("2027-03-03"), to: Self.date("2027-03-04"), today: Self.date("2027-03-02")).get()
        #expect(moves == ["wed": Self.date("2027-03-04"), "fri": Self.date("2027-03-06"), "next-mon": Self.date("2027-03-09")])
    }

    @Test("moving backwards pulls the rest of the plan earlier and merges with the day it lands on")
    func rescheduleBackward() throws {
        let moves = try PlanReschedule.move(Self.plan, from: Self.date("2027-03-05"), to: Self.date("2027-03-03"), today: Self.date("2027-03-03")).get()
        #expect(moves == ["fri": Self.date("2027-03-03"), "next-mon": Self.date("2027-03-06")])
    }

    @Test("a missed day of this week can be done later this week")
    func rescheduleMissedDay() throws {
        let moves = try PlanReschedule.move(Self.plan, from: Self.date("2027-03-01"), to: Self.date("2027-03-06"), today: Self.date("2027-03-04")).get()
        #expect(moves["mon"] == Self.date("2027-03-06"))
        #expect(moves["next-mon"] == Self.date("2027-03-13"))
        #expect(moves["wed-done"] == Self.date("2027-03-08"), "later items shift whatever their mark")
    }

    @Test("a move that would carry a later workout past 9999-12-31 is refused, not written as a five-digit year")
    func reschedulePastTheCalendar() {
        let plan = [PlannedWorkout(id: "a", date: Self.date("2027-03-01"), done: false), PlannedWorkout(id: "far", date: Self.date("9999-12-31"), done: false)]
        #expect(PlanReschedule.move(plan, from: Self.date("2027-03-01"), to: Self.date("2027-03-03"), today: Self.date("2027-03-01")) == .failure(.pastTheCalendar))
        #expect((try? PlanReschedule.move(plan, from: Self.date("2027-03-03"), to: Self.date("2027-03-01"), today: Self.date("2027-03-01")).get()) == nil)
        // Backwards is fine: nothing crosses the end.
        let back = [PlannedWorkout(id: "a", date: Self.date("2027-03-03"), done: false), PlannedWorkout(id: "far", date: Self.date("9999-12-31"), done: false)]
        #expect((try? PlanReschedule.move(back, from: Self.date("2027-03-03"), to: Self.date("2027-03-01"), today: Self.date("2027-03-01")).get())?["far"] == Self.date("9999-12-29"))
    }

    @Test("dates cross the month's end")
    func rescheduleMonthEnd() throws {
        let plan = [PlannedWorkout(id: "a", date: Self.date("2027-03-29"), done: false), PlannedWorkout(id: "b", date: Self.date("2027-03-31"), done: false)]
        let moves = try PlanReschedule.move(plan, from: Self.date("2027-03-29"), to: Self.date("2027-04-02"), today: Self.date("2027-03-29")).get()
        #expect(moves == ["a": Self.date("2027-04-02"), "b": Self.date("2027-04-04")])
    }

    @Test(
        "refused moves",
        arguments: [
            ("2027-03-03", "2027-03-08", "2027-03-02", PlanReschedule.Refusal.outsideWeek(field: "to")),
            ("2027-02-26", "2027-03-04", "2027-03-02", .outsideWeek(field: "from")),
            ("2027-03-03", "2027-03-01", "2027-03-02", .intoThePast),
            ("2027-03-03", "2027-03-03", "2027-03-02", .sameDay),
            ("2027-03-02", "2027-03-04", "2027-03-02", .nothingToMove),
        ])
    func rescheduleRefusals(from: String, to: String, today: String, expected: PlanReschedule.Refusal) {
        let result = PlanReschedule.move(Self.plan, from: Self.date(from), to: Self.date(to), today: Self.date(today))
        #expect(throws: expected) { try result.get() }
    }

    @Test("a day whose exercises are all done has nothing to move")
    func rescheduleAllDone() {
        let plan = [PlannedWorkout(id: "a", date: Self.date("2027-03-03"), done: true)]
        #expect(throws: PlanReschedule.Refusal.nothingToMove) {
            try PlanReschedule.move(plan, from: Self.date("2027-03-03"), to: Self.date("2027-03-04"), today: Self.date("2027-03-02")).get()
        }
    }

    @Test("plan progress: the share done, what is due, and the pace against the calendar")
    func planProgress() {
        let today = Self.date("2027-03-03")
        let items = [
            CheckableItem(date: Self.date("2027-03-01"), done: true), CheckableItem(date: Self.date("2027-03-02"), done: false),
            CheckableItem(date: today, done: false), CheckableItem(date: Self.date("2027-03-05"), done: true), CheckableItem(date: nil, done: false),
        ]
        let progress = PlanProgress(items, today: today)
        #expect(progress.total == 5 && progress.done == 2 && progress.sharePercent == 40)
        #expect(progress.due == 3 && progress.doneOfDue == 1 && progress.overdue == 1 && progress.pace == .behind)
        #expect(PlanProgress([CheckableItem(date: Self.date("2027-03-01"), done: true)], today: today).pace == .onTrack)
        #expect(PlanProgress([CheckableItem(date: today, done: false)], today: today).pace == .notStarted)
        #expect(PlanProgress([], today: today).sharePercent == 0)
        #expect(PlanProgress([CheckableItem(date: nil, done: true), CheckableItem(date: nil, done: false), CheckableItem(date: nil, done: false)], today: today).sharePercent == 33)
    }

    // MARK: Forms and questionnaires

    static let weightLoss = GoalsCatalogSeed.types[0].form

    @Test("settings are checked against their form, field by field")
    func settingsAgainstForm() {
        #expect(Self.weightLoss.problems(of: ["sport": "running"]).isEmpty)
        #expect(Self.weightLoss.problems(of: ["sport": "running", "kilograms": 5]).isEmpty)
        #expect(Self.weightLoss.problems(of: [:]) == ["settings.sport": "is required"])
        #expect(Self.weightLoss.problems(of: ["sport": "chess"])["settings.sport"]?.contains("swimming") == true)
        #expect(Self.weightLoss.problems(of: ["sport": "running", "kilograms": 0])["settings.kilograms"] == "must be at least 1")
        #expect(Self.weightLoss.problems(of: ["sport": "running", "kilograms": "5"])["settings.kilograms"] == "must be an integer")
        #expect(Self.weightLoss.problems(of: ["sport": "running", "colour": "red"])["settings.colour"] != nil)
        let custom = GoalsCatalogSeed.types.first { $0.id == "custom" }!.form
        #expect(custom.problems(of: ["goal": "   "])["settings.goal"] == "must not be blank")
        #expect(custom.problems(of: ["goal": .string(String(repeating: "a", count: 501))])["settings.goal"] != nil)
    }

    @Test("an admin's form is checked before it is saved")
    func formProblems() {
        var form = Self.weightLoss
        #expect(form.problems(field: "form").isEmpty)
        form.fields.append(form.fields[0])
        #expect(form.problems(field: "form")["form.fields[2].key"] == "appears twice")
        form.fields[2].key = "Bad Key"
        #expect(form.problems(field: "form")["form.fields[2].key"] != nil)
        form.fields[2] = GoalForm.Field(key: "n", kind: .integer, label: "N", help: nil, required: true, options: nil, minimum: 5, maximum: 2, maxLength: nil)
        #expect(form.problems(field: "form")["form.fields[2].maximum"] != nil)
        form.fields[2] = GoalForm.Field(key: "c", kind: .choice, label: "C", help: nil, required: true, options: [], minimum: nil, maximum: nil, maxLength: nil)
        #expect(form.problems(field: "form")["form.fields[2].options"] != nil)
    }

    @Test("a questionnaire must be answered whole, each answer one of its options")
    func questionnaire() {
        let test = Questionnaire(questions: GoalsCatalogSeed.questions.filter { $0.questionnaire == "nutrition" }.map(\.question))
        #expect(test.problems(of: ["meals_work_days": "three", "meals_weekend_days": "brunch"]).isEmpty)
        #expect(test.problems(of: ["meals_work_days": "three"]) == ["answers.meals_weekend_days": "is required: answer every question"])
        #expect(test.problems(of: ["meals_work_days": "three", "meals_weekend_days": "seven"])["answers.meals_weekend_days"] != nil)
        #expect(test.problems(of: ["meals_work_days": "three", "meals_weekend_days": "brunch", "x": "y"])["answers.x"] != nil)
    }
}

@Suite("Goals: daily allowances")
struct DailyAllowanceTests {
    @Test("one more write is allowed until the limit-th latest of the window; then the wait is until it leaves the window")
    func waits() {
        let allowance = DailyAllowance(limit: 3, window: 100)
        let now = Date(timeIntervalSince1970: 1_000)
        #expect(allowance.windowStart(at: now) == Date(timeIntervalSince1970: 900))
        #expect(allowance.wait(limitthLatest: nil, at: now) == nil)
        #expect(allowance.wait(limitthLatest: Date(timeIntervalSince1970: 950), at: now) == 50_000)
        #expect(allowance.wait(limitthLatest: Date(timeIntervalSince1970: 900.0004), at: now) == 1)
        #expect(allowance.wait(limitthLatest: Date(timeIntervalSince1970: 1_000), at: now) == 100_000)
        #expect(DailyAllowance.goals.window == 86_400 && DailyAllowance.comments.limit == 500)
    }
}
