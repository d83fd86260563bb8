import Platform

/// The body part an exercise trains (spec 004, Stats: the share of exercises per body part).
enum BodyPart: String, CaseIterable, Codable, Sendable, Hashable {
    case chest, back, shoulders, arms, core, legs
    case fullBody = "full_body"
}

/// The motor ability an exercise trains (spec 004: Kraft / Ausdauer / Schnelligkeit).
enum MotorAbility: String, CaseIterable, Codable, Sendable, Hashable {
    case strength, endurance, speed
}

/// The user's fitness level (Home → Preferences): it picks an exercise's base repetitions
/// and weighs its score.
enum FitnessLevel: String, CaseIterable, Codable, Sendable, Hashable, Comparable {
    case beginner, intermediate, advanced

    static func < (lhs: FitnessLevel, rhs: FitnessLevel) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// The user's fitness goal (Home → Preferences → Fitness Goal): it sets the recommended
/// repetitions (spec 004, Gym e).
enum FitnessGoal: String, CaseIterable, Codable, Sendable, Hashable {
    /// Keep the current form: fewer repetitions than the base.
    case maintain
    /// Get fitter: the base repetitions.
    case improve
    /// Push hard: more repetitions than the base.
    case challenge
}

/// A name in the languages the apps show (German first: the fitness assistant's spec is
/// German; English for everyone else).
struct LocalizedName: Codable, Sendable, Hashable {
    var de: String
    var en: String

    /// The name in `language` (`de` or anything else: English).
    func text(_ language: String?) -> String { language == "de" ? de : en }
}

/// An exercise of the catalog (admin-managed).
struct Exercise: Codable, Sendable, Hashable {
    var id: String
    var name: LocalizedName
    var bodyPart: BodyPart
    var motorAbility: MotorAbility
    /// Base repetitions (or seconds, for held exercises) per fitness level.
    var baseRepetitions: BaseRepetitions
    /// The instruction graphic (the platform's media), if any.
    var imageID: String?
    /// A training video hosted elsewhere (https), if any.
    var videoURL: String?
    /// Withdrawn exercises are not chosen any more; past workouts keep them.
    var active: Bool = true
}

/// Base repetitions per fitness level, non-decreasing from beginner to advanced.
struct BaseRepetitions: Codable, Sendable, Hashable {
    var beginner: Int
    var intermediate: Int
    var advanced: Int

    func at(_ level: FitnessLevel) -> Int {
        switch level {
        case .beginner: beginner
        case .intermediate: intermediate
        case .advanced: advanced
        }
    }
}

/// What the user set on Home → Preferences.
struct Preferences: Codable, Sendable, Hashable {
    var level: FitnessLevel = .beginner
    var goal: FitnessGoal = .improve
    /// The countdown (rest) before an exercise can be completed, in seconds.
    var countdownSeconds: Int = 30
    var exercisesPerWorkout: Int = 8
    /// Planned progression: the recommendation grows by this many percent per week.
    var progressionPercentPerWeek: Int = 5

    static let limits = (countdownSeconds: 5...600, exercisesPerWorkout: 1...30, progressionPercentPerWeek: 0...50)
}
