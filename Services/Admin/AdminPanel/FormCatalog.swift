import Foundation
import Platform

/// Every form of the panel, each bound to one operation and a role. `POST /act/<id>`
/// accepts only these, so a staff session cannot reach an admin operation through the
/// panel whatever it posts (the services check the role again).
enum FormCatalog {
    typealias Choice = FormField.Choice

    static let roles = ["recipient", "sponsor", "staff", "admin"].map { Choice($0) }
    static let pushKinds = ["news", "updates", "promotions", "offers", "congratulations"].map { Choice($0) }
    static let apps = [
        Choice("goals", "Sponsored goals"), Choice("buckstash", "BuckStash"), Choice("wakepark", "WAKEPARKBY"),
        Choice("reminder", "Reminder"), Choice("fitness", "Fitness assistant"),
    ]
    static let weekdays = [
        Choice("1", "Monday"), Choice("2", "Tuesday"), Choice("3", "Wednesday"), Choice("4", "Thursday"), Choice("5", "Friday"),
        Choice("6", "Saturday"), Choice("7", "Sunday"),
    ]
    static let bodyParts = ["chest", "back", "shoulders", "arms", "core", "legs", "full_body"].map { Choice($0, $0.replacingOccurrences(of: "_", with: " ")) }
    static let motorAbilities = ["strength", "endurance", "speed"].map { Choice($0) }

    static let all: [AdminForm] = users + goals + notifications + catalogs + park + desk + operations

    // MARK: Users

    static let users: [AdminForm] = [
        AdminForm(
            id: "user-grant", op: "auth.admin.roles.grant", title: "Grant a role", submit: "Grant",
            fields: [FormField("userId", "User", .hidden, required: true), FormField("role", "Role", .choice(roles), required: true)],
            success: "Role granted."),
        AdminForm(
            id: "user-revoke", op: "auth.admin.roles.revoke", title: "Take a role away", submit: "Take the role away",
            fields: [FormField("userId", "User", .hidden, required: true), FormField("role", "Role", .hidden, required: true)],
            confirm: "Take this role away? The user's sessions end, so they sign in again.", success: "Role taken away.", danger: true),
        AdminForm(
            id: "user-delete", op: "auth.admin.users.delete", title: "Delete a user", submit: "Delete the account",
            fields: [FormField("userId", "User", .hidden, required: true)],
            confirm: "Delete this account? Every app forgets the user's data; this cannot be undone.", success: "The account was deleted.",
            danger: true),
    ]

    // MARK: Goals

    static let typeFields = [
        FormField("title", "Title", required: true), FormField("position", "Position in the list", .integer),
        FormField("icon", "Icon", .image(service: "goals"), help: "PNG, JPEG or WebP, at most 512 KiB"),
        FormField(
            "form", "Settings form (JSON)", .json, required: true,
            help: "fields: key, label, kind (choice, text, integer, boolean), required, and options / minimum / maximum / maxLength / help; info"),
    ]
    static let groupFields = [
        FormField("title", "Title", required: true), FormField("position", "Position in the list", .integer),
        FormField("icon", "Title icon", .image(service: "goals"), help: "PNG, JPEG or WebP, at most 512 KiB"),
    ]

    static let goals: [AdminForm] = [
        AdminForm(id: "goal-type-new", op: "goals.admin.types.save", title: "New goal type", submit: "Add the type", fields: typeFields, success: "Goal type added."),
        AdminForm(
            id: "goal-type-edit", op: "goals.admin.types.save", title: "Edit the goal type",
            fields: [FormField("id", "Type", .hidden, required: true)] + typeFields, success: "Goal type saved."),
        AdminForm(
            id: "goal-type-retire", op: "goals.admin.types.retire", title: "Take the type off offer", submit: "Take off offer",
            fields: [FormField("id", "Type", .hidden, required: true)], confirm: "Take this goal type off offer? Goals made with it keep it.",
            success: "The type is off offer.", danger: true, fixed: ["retired": true]),
        AdminForm(
            id: "goal-type-restore", op: "goals.admin.types.retire", title: "Offer the type again", submit: "Offer again",
            fields: [FormField("id", "Type", .hidden, required: true)], success: "The type is on offer again.", fixed: ["retired": false]),
        AdminForm(id: "group-new", op: "goals.admin.groups.save", title: "New sponsor group", submit: "Add the group", fields: groupFields, success: "Sponsor group added."),
        AdminForm(
            id: "group-edit", op: "goals.admin.groups.save", title: "Edit the sponsor group",
            fields: [FormField("id", "Group", .hidden, required: true)] + groupFields, success: "Sponsor group saved."),
        AdminForm(
            id: "group-retire", op: "goals.admin.groups.retire", title: "Take the group off offer", submit: "Take off offer",
            fields: [FormField("id", "Group", .hidden, required: true)], confirm: "Take this sponsor group off offer? Sponsors in it keep it.",
            success: "The group is off offer.", danger: true, fixed: ["retired": true]),
        AdminForm(
            id: "group-restore", op: "goals.admin.groups.retire", title: "Offer the group again", submit: "Offer again",
            fields: [FormField("id", "Group", .hidden, required: true)], success: "The group is on offer again.", fixed: ["retired": false]),
        AdminForm(
            id: "goals-text", op: "goals.admin.texts.set", title: "Pop-up or information text",
            fields: [
                FormField("key", "Key", required: true, help: "a-z, 0-9, . and _, e.g. popup.welcome"),
                FormField("locale", "Language", required: true, help: "en, es, ru …"),
                FormField("text", "Text", .multiline, help: "leave empty to remove the text", nullable: true),
            ], success: "Text saved."),
        AdminForm(
            id: "questionnaire-set", op: "goals.admin.questionnaire.set", title: "Questions",
            fields: [
                FormField("questionnaire", "Questionnaire", .hidden, required: true),
                FormField(
                    "questions", "Questions (JSON)", .json, required: true,
                    help: "in order: text, options [{value, label}] (2 to 30), id to keep a question's answers; nutrition also section (work_days, weekend_days)"),
            ], success: "Questions saved."),
        AdminForm(
            id: "goal-item-add", op: "goals.admin.items.add", title: "Add to the plan", submit: "Add",
            fields: [
                FormField("goalId", "Goal", .hidden, required: true),
                FormField(
                    "kind", "Kind",
                    .choice([Choice("workout"), Choice("nutrition"), Choice("tip"), Choice("recommendation")]), required: true),
                FormField("date", "Date", .date, help: "workouts need one; nutrition may have one"),
                FormField("text", "Text", .multiline, required: true), FormField("requirement", "Requirement", .multiline),
                FormField("checkable", "The recipient can check it off (recommendations)", .boolean, omittedWhenOff: true),
            ], success: "Added to the plan.", itemsKey: "items", outerFields: ["goalId"]),
        AdminForm(
            id: "goal-item-remove", op: "goals.admin.items.remove", title: "Remove a plan item", submit: "Remove",
            fields: [FormField("itemId", "Item", .hidden, required: true)], confirm: "Remove this item from the plan?", success: "Removed.",
            danger: true),
        AdminForm(
            id: "goal-progress", op: "goals.admin.progress.set", title: "Progress", submit: "Set the progress",
            fields: [
                FormField("goalId", "Goal", .hidden, required: true),
                FormField("percent", "Percent done", .integer, required: true, help: "0 to 100; 100 completes the goal and earns its rewards"),
            ], success: "Progress set."),
        AdminForm(
            id: "goal-fail", op: "goals.admin.fail", title: "Mark the goal failed", submit: "Mark failed",
            fields: [FormField("goalId", "Goal", .hidden, required: true), FormField("reason", "Reason (shown in the feeds)", .multiline, required: true)],
            confirm: "Mark this goal failed? Its promised rewards are forfeited.", success: "The goal is marked failed.", danger: true),
    ]

    // MARK: Notifications

    static let notifications: [AdminForm] = [
        AdminForm(
            id: "goals-broadcast", op: "goals.admin.broadcast", title: "Push to the goals app's users", submit: "Send",
            fields: [
                FormField("title", "Title", required: true), FormField("text", "Text", .multiline, required: true),
                FormField("kind", "Kind", .choice(pushKinds)),
                FormField(
                    "audience", "Audience",
                    .choice([Choice("everyone", "Everyone"), Choice("role", "A role"), Choice("sponsor_group", "A sponsor group")]), required: true),
                FormField("role", "Role (audience: a role)", .choice(roles)),
                FormField("groupId", "Sponsor group (audience: a sponsor group)"),
            ], success: "Broadcast {broadcastId} sent.", previewable: true),
        AdminForm(
            id: "push-broadcast", op: "reminders.admin.broadcast", title: "Push to an app's devices", submit: "Send",
            fields: [
                FormField("appId", "App", .choice(apps), required: true), FormField("title", "Title", required: true),
                FormField("text", "Text", .multiline, required: true), FormField("kind", "Kind", .choice(pushKinds)),
                FormField("role", "Only users with the role", .choice(roles)),
                FormField("imageId", "Image", .image(service: "reminders")),
            ], success: "Queued for up to {devices} devices.", previewable: true),
        AdminForm(
            id: "template-set", op: "reminders.admin.templates.set", title: "Notification text",
            fields: [
                FormField("kind", "Kind", .hidden, required: true), FormField("language", "Language", .hidden, required: true),
                FormField("title", "Title", required: true), FormField("text", "Text", .multiline, required: true),
            ], success: "Text saved; new notifications use it."),
        AdminForm(
            id: "template-reset", op: "reminders.admin.templates.set", title: "Back to the shipped text", submit: "Reset",
            fields: [FormField("kind", "Kind", .hidden, required: true), FormField("language", "Language", .hidden, required: true)],
            confirm: "Go back to the shipped text?", success: "Back to the shipped text.", fixed: ["reset": true]),
    ]

    // MARK: Savings and fitness catalogs

    static let catalogs: [AdminForm] = [
        AdminForm(
            id: "savings-method", op: "savings.admin.methods.save", title: "Method presentation",
            fields: [
                FormField("id", "Method", .hidden, required: true), FormField("title", "Title"), FormField("summary", "Summary", .multiline),
                FormField("position", "Position in the list", .integer),
                FormField("slides", "Slides (JSON)", .json, help: "in order: title, text, imageId (an uploaded image's id, or null)"),
            ], success: "Presentation saved."),
        AdminForm(
            id: "savings-image", op: "", title: "Upload a slide image", submit: "Upload",
            fields: [FormField("image", "Image", .image(service: "savings"), required: true)],
            success: "Uploaded: use \"imageId\": \"{image}\" in a slide.", sendsIdem: false),
        AdminForm(
            id: "exercise-save", op: "stats.admin.exercises.save", title: "Exercise",
            fields: [
                FormField("id", "Id", required: true, help: "lowercase letters, digits and _, e.g. push_up; an existing id changes that exercise"),
                FormField("nameEn", "Name (English)", required: true), FormField("nameDe", "Name (German)", required: true),
                FormField("bodyPart", "Body part", .choice(bodyParts), required: true),
                FormField("motorAbility", "Motor ability", .choice(motorAbilities), required: true),
                FormField("beginner", "Repetitions, beginner", .integer, required: true),
                FormField("intermediate", "Repetitions, intermediate", .integer, required: true),
                FormField("advanced", "Repetitions, advanced", .integer, required: true),
                FormField("position", "Position", .integer), FormField("imageId", "Instruction image", .image(service: "stats")),
                FormField("videoUrl", "Video link (https)", nullable: true), FormField("active", "Offered", .boolean),
            ], success: "Exercise saved."),
        AdminForm(
            id: "slogan-save", op: "stats.admin.slogans.save", title: "Slogan",
            fields: [
                FormField("id", "Slogan", .hiddenInteger), FormField("language", "Language", required: true, help: "two letters: de, en, ru"),
                FormField("text", "Text", required: true), FormField("active", "Shown", .boolean),
            ], success: "Slogan saved."),
    ]

    // MARK: The park

    static let park: [AdminForm] = [
        AdminForm(
            id: "park-settings", op: "booking.admin.park.update", title: "The park's settings",
            fields: [
                FormField("timeZone", "Time zone", help: "IANA, e.g. Europe/Minsk"), FormField("slotMinutes", "Slot length (minutes)", .integer),
                FormField("capacity", "Places per slot", .integer), FormField("horizonDays", "Bookable days ahead", .integer),
                FormField("minimumNoticeMinutes", "Minimum notice (minutes)", .integer),
                FormField("maxBookingsPerDay", "Bookings per rider per day", .integer),
                FormField("freeCancellationSeconds", "Free cancellation until (seconds before)", .integer, help: "7200 = 2 hours"),
                FormField("lateSanction", "Late cancellation", .choice([Choice("forfeit", "forfeit the session"), Choice("none", "no sanction")])),
                FormField("price.minor", "Price of a slot", .money, required: true),
                FormField("price.currency", "Currency", required: true, help: "ISO 4217, e.g. BYN"),
            ], success: "Settings saved."),
        AdminForm(
            id: "park-cable", op: "booking.admin.cables.set", title: "Cable",
            fields: [
                FormField("id", "Id", required: true, help: "e.g. reverse-1; an existing id changes that cable"), FormField("name", "Name", required: true),
                FormField("active", "In service", .boolean), FormField("image", "Picture", .image(service: "booking")),
            ], success: "Cable saved."),
        AdminForm(
            id: "park-hours", op: "booking.admin.hours.set", title: "Opening hours",
            fields: [
                FormField("weekday", "Weekday", .choice(weekdays)), FormField("date", "…or one date", .date),
                FormField("open", "Opens", .time), FormField("close", "Closes", .time, help: "both empty: closed that day"),
            ], success: "Hours saved."),
        AdminForm(
            id: "park-package", op: "booking.admin.packages.set", title: "Pass package",
            fields: [
                FormField("id", "Id", required: true, help: "e.g. five; an existing id changes that package"), FormField("name", "Name", required: true),
                FormField("sessions", "Sessions", .integer, required: true), FormField("credit", "Balance credit", .money, required: true),
                FormField("price", "Price", .money, required: true), FormField("active", "On sale", .boolean),
                FormField("image", "Picture", .image(service: "booking")),
            ], success: "Package saved."),
    ]

    // MARK: Operations: payments, deliveries, body options

    static let bodyOptionFields = [
        FormField("kind", "Kind", .choice([Choice("figure"), Choice("shape")]), required: true),
        FormField("sex", "Sex", .choice([Choice("female"), Choice("male")]), required: true), FormField("title", "Title", required: true),
        FormField("position", "Position", .integer), FormField("image", "Picture", .image(service: "goals")),
    ]

    static let operations: [AdminForm] = [
        AdminForm(
            id: "payment-reconcile", op: "booking.admin.payments.reconcile", title: "Settle the payment by hand", submit: "Settle",
            fields: [
                FormField("payment", "Payment", .hidden, required: true),
                FormField(
                    "outcome", "What the provider says",
                    .choice([Choice("succeeded", "it succeeded: credit the pass"), Choice("failed", "it failed: close it")]), required: true),
                FormField("reason", "How you checked", required: true),
            ], confirm: "Settle this payment by hand? A success credits the rider's pass.", success: "Payment settled."),
        AdminForm(
            id: "auth-retry", op: "auth.delivery.retry", title: "Send again", submit: "Send again",
            fields: [FormField("id", "Message", .hidden, required: true)], success: "Queued again."),
        AdminForm(
            id: "push-retry", op: "reminders.delivery.retry", title: "Send again", submit: "Send again",
            fields: [FormField("id", "Message", .hidden, required: true)], success: "Queued again."),
        AdminForm(
            id: "body-option-new", op: "goals.admin.body_options.save", title: "New figure or shape", submit: "Add", fields: bodyOptionFields,
            success: "Option added."),
        AdminForm(
            id: "body-option-edit", op: "goals.admin.body_options.save", title: "Edit the option",
            fields: [FormField("id", "Option", .hidden, required: true)] + bodyOptionFields.filter { $0.name != "kind" && $0.name != "sex" },
            success: "Option saved."),
        AdminForm(
            id: "body-option-retire", op: "goals.admin.body_options.retire", title: "Take off offer", submit: "Take off offer",
            fields: [FormField("id", "Option", .hidden, required: true)], confirm: "Take this option off offer? Profiles that use it keep it.",
            success: "The option is off offer.", danger: true, fixed: ["retired": true]),
        AdminForm(
            id: "body-option-restore", op: "goals.admin.body_options.retire", title: "Offer again", submit: "Offer again",
            fields: [FormField("id", "Option", .hidden, required: true)], success: "The option is on offer again.", fixed: ["retired": false]),
    ]

    // MARK: The desk (staff)

    static let desk: [AdminForm] = [
        AdminForm(
            id: "desk-attended", op: "booking.staff.mark", role: .staff, title: "Mark attended", submit: "Attended",
            fields: [FormField("booking", "Booking", .hidden, required: true)], success: "Marked attended.", fixed: ["outcome": "attended"]),
        AdminForm(
            id: "desk-no-show", op: "booking.staff.mark", role: .staff, title: "Mark no-show", submit: "No-show",
            fields: [FormField("booking", "Booking", .hidden, required: true)], success: "Marked no-show; the booking's sanction applies.",
            fixed: ["outcome": "no_show"]),
        AdminForm(
            id: "desk-cancel", op: "booking.staff.cancel", role: .staff, title: "Cancel the booking", submit: "Cancel the booking",
            fields: [FormField("booking", "Booking", .hidden, required: true), FormField("reason", "Reason", .hidden)],
            confirm: "Cancel this booking on the park's side? The rider gets everything back and is notified.", success: "Booking cancelled and refunded.",
            danger: true),
        AdminForm(
            id: "desk-waive", op: "booking.staff.sanction", role: .staff, title: "Waive the sanction", submit: "Waive",
            fields: [FormField("booking", "Booking", .hidden, required: true)], success: "Sanction waived: the session or money went back.",
            fixed: ["action": "waive"]),
        AdminForm(
            id: "desk-forfeit", op: "booking.staff.sanction", role: .staff, title: "Apply the sanction", submit: "Forfeit",
            fields: [FormField("booking", "Booking", .hidden, required: true)], confirm: "Keep the session or money as the sanction?",
            success: "Sanction applied.", danger: true, fixed: ["action": "forfeit"]),
        AdminForm(
            id: "desk-walk-in", op: "booking.staff.book", role: .staff, title: "Book a walk-in or a phone call", submit: "Book",
            fields: [
                FormField("cable", "Cable", required: true), FormField("start", "Slot", required: true),
                FormField("phone", "Phone", help: "+375…; finds the rider's account, or makes one with the names below"),
                FormField("firstName", "First name"), FormField("lastName", "Last name"), FormField("user", "…or the rider's id"),
                FormField("payWith", "Payment", .choice([Choice("cash", "cash at the desk"), Choice("pass", "the rider's pass")]), required: true),
                FormField("reason", "Note"),
            ], success: "Booked.", pickedOnPage: ["cable", "start"]),
        AdminForm(
            id: "desk-block", op: "booking.staff.blocks.add", role: .staff, title: "Close a period", submit: "Close the period",
            fields: [
                FormField("cable", "Cable", help: "empty: every cable"), FormField("start", "From", .localDateTime, required: true),
                FormField("end", "Until", .localDateTime, required: true), FormField("reason", "Reason"),
                FormField("cancelBookings", "Cancel and refund the bookings inside it", .boolean),
            ], confirm: "Close this period? No one can book it; with the box ticked, its bookings are cancelled and refunded.",
            success: "Period closed; {cancelled} bookings cancelled.", danger: true),
        AdminForm(
            id: "desk-unblock", op: "booking.staff.blocks.remove", role: .staff, title: "Open the period again", submit: "Open again",
            fields: [FormField("id", "Block", .hidden, required: true), FormField("reason", "Reason", .hidden)],
            confirm: "Open this period for booking again? Bookings cancelled when it was closed stay cancelled.", success: "The period is open again."),
        AdminForm(
            id: "rider-credit", op: "booking.staff.pass.adjust", role: .staff, title: "Credit or debit the pass", submit: "Apply",
            fields: [
                FormField("user", "Rider", .hidden, required: true),
                FormField("sessions", "Sessions", .integer, help: "positive credits, negative debits"),
                FormField("amount", "Money", .money, help: "e.g. 20.00 or -5.00"),
                FormField("reason", "Reason", required: true, help: "a cash sale, goodwill …"),
            ], success: "Pass updated."),
    ]
}
