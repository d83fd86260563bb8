/// The starting content of the exercise catalog: bodyweight exercises for training at home
/// (at most a chair or a wall). For held exercises the base repetitions are seconds, as the
/// name says ("(Sekunden)" / "(seconds)"). Repetitions of one-sided exercises count both sides.
enum ExerciseCatalogSeed {
    static let exercises: [Exercise] = [
        // MARK: Chest
        exercise("push_up", de: "Liegestütze", en: "Push-up", .chest, .strength, reps: 8, 15, 25),
        exercise("knee_push_up", de: "Knieliegestütze", en: "Knee Push-up", .chest, .endurance, reps: 10, 20, 30),
        exercise("incline_push_up", de: "Erhöhte Liegestütze (Hände auf Stuhl)", en: "Incline Push-up (hands on chair)", .chest, .strength, reps: 10, 15, 25),
        exercise("wide_push_up", de: "Breite Liegestütze", en: "Wide Push-up", .chest, .strength, reps: 6, 12, 20),
        exercise("decline_push_up", de: "Liegestütze mit erhöhten Füßen", en: "Decline Push-up", .chest, .strength, reps: 5, 10, 18),
        exercise("clap_push_up", de: "Klatsch-Liegestütze", en: "Clap Push-up", .chest, .speed, reps: 3, 6, 12),
        exercise("isometric_palm_press", de: "Isometrisches Handflächendrücken (Sekunden)", en: "Isometric Palm Press (seconds)", .chest, .endurance, reps: 20, 30, 45),

        // MARK: Back
        exercise("superman", de: "Superman", en: "Superman", .back, .strength, reps: 8, 12, 20),
        exercise("superman_hold", de: "Superman halten (Sekunden)", en: "Superman Hold (seconds)", .back, .endurance, reps: 15, 30, 45),
        exercise("prone_back_extension", de: "Rückenstrecken in Bauchlage", en: "Prone Back Extension", .back, .strength, reps: 10, 15, 20),
        exercise("prone_ytw_raise", de: "Y-T-W-Heben in Bauchlage", en: "Prone Y-T-W Raise", .back, .strength, reps: 6, 10, 15),
        exercise("reverse_snow_angel", de: "Umgekehrte Schneeengel", en: "Reverse Snow Angel", .back, .endurance, reps: 10, 15, 20),
        exercise("bird_dog", de: "Vierfüßlerstand diagonal", en: "Bird Dog", .back, .endurance, reps: 10, 16, 24),
        exercise("swimmer", de: "Schwimmer", en: "Swimmers", .back, .speed, reps: 20, 30, 40),

        // MARK: Shoulders
        exercise("pike_push_up", de: "Pike-Liegestütze", en: "Pike Push-up", .shoulders, .strength, reps: 5, 10, 15),
        exercise("hindu_push_up", de: "Hindu-Liegestütze", en: "Hindu Push-up", .shoulders, .strength, reps: 4, 8, 12),
        exercise("wall_walk", de: "Wall Walks", en: "Wall Walk", .shoulders, .strength, reps: 2, 4, 6),
        exercise("wall_handstand_hold", de: "Handstand an der Wand (Sekunden)", en: "Wall Handstand Hold (seconds)", .shoulders, .endurance, reps: 10, 20, 40),
        exercise("arm_circles", de: "Armkreisen", en: "Arm Circles", .shoulders, .endurance, reps: 20, 30, 50),
        exercise("plank_shoulder_tap", de: "Schulter-Taps im Stütz", en: "Plank Shoulder Tap", .shoulders, .endurance, reps: 10, 20, 30),
        exercise("shadow_boxing", de: "Schattenboxen (Sekunden)", en: "Shadow Boxing (seconds)", .shoulders, .endurance, reps: 30, 60, 90),

        // MARK: Arms
        exercise("chair_dip", de: "Dips am Stuhl", en: "Chair Dip", .arms, .strength, reps: 8, 12, 20),
        exercise("diamond_push_up", de: "Diamant-Liegestütze", en: "Diamond Push-up", .arms, .strength, reps: 4, 8, 15),
        exercise("close_grip_push_up", de: "Enge Liegestütze", en: "Close-Grip Push-up", .arms, .strength, reps: 5, 10, 18),
        exercise("sphinx_push_up", de: "Sphinx-Liegestütze", en: "Sphinx Push-up", .arms, .strength, reps: 5, 10, 15),
        exercise("plank_up_down", de: "Plank-Up-Downs", en: "Plank Up-Down", .arms, .endurance, reps: 6, 10, 16),
        exercise("speed_punches", de: "Speed-Punches (Sekunden)", en: "Speed Punches (seconds)", .arms, .speed, reps: 20, 30, 45),

        // MARK: Core
        exercise("plank_hold", de: "Unterarmstütz (Sekunden)", en: "Plank (seconds)", .core, .endurance, reps: 20, 45, 90),
        exercise("side_plank_hold", de: "Seitstütz (Sekunden)", en: "Side Plank (seconds)", .core, .endurance, reps: 15, 30, 60),
        exercise("hollow_hold", de: "Hollow Body Hold (Sekunden)", en: "Hollow Body Hold (seconds)", .core, .endurance, reps: 15, 30, 45),
        exercise("crunch", de: "Crunches", en: "Crunches", .core, .endurance, reps: 15, 25, 40),
        exercise("bicycle_crunch", de: "Fahrrad-Crunches", en: "Bicycle Crunch", .core, .endurance, reps: 16, 24, 40),
        exercise("scissor_kick", de: "Beinschere", en: "Scissor Kicks", .core, .endurance, reps: 20, 30, 50),
        exercise("dead_bug", de: "Dead Bug", en: "Dead Bug", .core, .endurance, reps: 10, 16, 24),
        exercise("sit_up", de: "Sit-ups", en: "Sit-up", .core, .strength, reps: 10, 20, 30),
        exercise("lying_leg_raise", de: "Beinheben in Rückenlage", en: "Lying Leg Raise", .core, .strength, reps: 8, 12, 20),
        exercise("v_up", de: "V-Ups", en: "V-Up", .core, .strength, reps: 6, 12, 20),
        exercise("russian_twist", de: "Russian Twists", en: "Russian Twist", .core, .strength, reps: 16, 24, 40),
        exercise("mountain_climber", de: "Bergsteiger", en: "Mountain Climber", .core, .speed, reps: 20, 30, 50),

        // MARK: Legs
        exercise("squat", de: "Kniebeugen", en: "Bodyweight Squat", .legs, .strength, reps: 12, 20, 30),
        exercise("forward_lunge", de: "Ausfallschritte", en: "Forward Lunge", .legs, .strength, reps: 8, 12, 20),
        exercise("reverse_lunge", de: "Ausfallschritte rückwärts", en: "Reverse Lunge", .legs, .strength, reps: 8, 12, 20),
        exercise("side_lunge", de: "Seitliche Ausfallschritte", en: "Side Lunge", .legs, .strength, reps: 8, 12, 20),
        exercise("bulgarian_split_squat", de: "Bulgarische Kniebeugen (Fuß auf Stuhl)", en: "Bulgarian Split Squat (foot on chair)", .legs, .strength, reps: 6, 10, 16),
        exercise("assisted_pistol_squat", de: "Pistol Squats mit Stütze", en: "Assisted Pistol Squat", .legs, .strength, reps: 3, 6, 10),
        exercise("glute_bridge", de: "Beckenheben", en: "Glute Bridge", .legs, .strength, reps: 12, 20, 30),
        exercise("single_leg_glute_bridge", de: "Einbeiniges Beckenheben", en: "Single-Leg Glute Bridge", .legs, .strength, reps: 8, 12, 16),
        exercise("wall_sit", de: "Wandsitzen (Sekunden)", en: "Wall Sit (seconds)", .legs, .endurance, reps: 20, 45, 90),
        exercise("calf_raise", de: "Wadenheben", en: "Calf Raise", .legs, .endurance, reps: 15, 25, 40),
        exercise("sumo_squat", de: "Sumo-Kniebeugen", en: "Sumo Squat", .legs, .endurance, reps: 15, 25, 40),
        exercise("chair_step_up", de: "Step-ups auf den Stuhl", en: "Chair Step-up", .legs, .endurance, reps: 10, 16, 24),
        exercise("jump_squat", de: "Sprungkniebeugen", en: "Jump Squat", .legs, .speed, reps: 8, 12, 20),
        exercise("jumping_lunge", de: "Ausfallschrittsprünge", en: "Jumping Lunge", .legs, .speed, reps: 6, 10, 16),
        exercise("skater_jump", de: "Eisschnellläufer-Sprünge", en: "Skater Jump", .legs, .speed, reps: 10, 16, 24),
        exercise("high_knees", de: "Kniehebelauf", en: "High Knees", .legs, .speed, reps: 20, 30, 50),
        exercise("butt_kicks", de: "Anfersen", en: "Butt Kicks", .legs, .speed, reps: 20, 30, 50),

        // MARK: Full body
        exercise("burpee", de: "Burpees", en: "Burpee", .fullBody, .speed, reps: 5, 10, 15),
        exercise("jumping_jack", de: "Hampelmann", en: "Jumping Jack", .fullBody, .speed, reps: 20, 30, 50),
        exercise("star_jump", de: "Sternsprünge", en: "Star Jump", .fullBody, .speed, reps: 8, 12, 20),
        exercise("squat_thrust", de: "Squat Thrusts", en: "Squat Thrust", .fullBody, .speed, reps: 8, 12, 20),
        exercise("plank_jack", de: "Plank Jacks", en: "Plank Jack", .fullBody, .speed, reps: 12, 20, 30),
        exercise("inchworm", de: "Inchworm (Raupe)", en: "Inchworm", .fullBody, .strength, reps: 5, 8, 12),
        exercise("bear_crawl", de: "Bärengang (Sekunden)", en: "Bear Crawl (seconds)", .fullBody, .endurance, reps: 20, 30, 45),
        exercise("crab_walk", de: "Krebsgang (Sekunden)", en: "Crab Walk (seconds)", .fullBody, .endurance, reps: 15, 30, 45),
    ]

    private static func exercise(
        _ id: String, de: String, en: String, _ bodyPart: BodyPart, _ motorAbility: MotorAbility,
        reps beginner: Int, _ intermediate: Int, _ advanced: Int
    ) -> Exercise {
        Exercise(
            id: id,
            name: LocalizedName(de: de, en: en),
            bodyPart: bodyPart,
            motorAbility: motorAbility,
            baseRepetitions: BaseRepetitions(beginner: beginner, intermediate: intermediate, advanced: advanced),
            imageID: nil,
            videoURL: nil,
            active: true)
    }
}
