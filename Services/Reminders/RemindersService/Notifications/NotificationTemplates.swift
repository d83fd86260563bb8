import Foundation

/// A notification's words with `{name}` placeholders, per kind and language.
struct NotificationTemplate: Sendable, Equatable, Codable {
    var title: String
    var body: String

    /// The longest title and body admins may write (what lock screens show is shorter).
    static let maxTitle = 100
    static let maxBody = 400

    /// The template with its placeholders filled from `values`; a placeholder with no
    /// value becomes empty, and braces that name nothing stay as they are.
    func render(_ values: [String: String]) -> (title: String, body: String) {
        (Self.fill(title, values), Self.fill(body, values))
    }

    static func fill(_ text: String, _ values: [String: String]) -> String {
        guard text.contains("{") else { return text }
        var output = ""
        scan(text, literal: { output += $0 }, placeholder: { output += values[$0] ?? "" })
        return output
    }

    /// The placeholders a text uses, found exactly as ``fill(_:_:)`` finds them.
    static func placeholders(in text: String) -> Set<String> {
        var names: Set<String> = []
        scan(text, literal: { _ in }, placeholder: { names.insert($0) })
        return names
    }

    /// Walks `text`: `{name}` (one or more ASCII letters) is a placeholder; any other
    /// brace is literal text.
    private static func scan(_ text: String, literal: (Substring) -> Void, placeholder: (String) -> Void) {
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            literal(rest[..<open])
            let after = rest[rest.index(after: open)...]
            let name = after.prefix { $0.isASCII && $0.isLetter }
            guard !name.isEmpty, name.endIndex < after.endIndex, after[name.endIndex] == "}" else {
                literal("{")
                rest = after
                continue
            }
            placeholder(String(name))
            rest = after[after.index(after: name.endIndex)...]
        }
        literal(rest)
    }

    /// The languages templates are written in (English first).
    static let languages = ["en", "ru"]

    /// The shipped templates; admins override them per kind and language
    /// (`reminders.admin.templates.set`).
    static func standard(_ kind: PushKind, language: String) -> NotificationTemplate {
        let russian = language == "ru"
        func t(_ en: (String, String), _ ru: (String, String)) -> NotificationTemplate {
            let chosen = russian ? ru : en
            return NotificationTemplate(title: chosen.0, body: chosen.1)
        }
        switch kind {
        case .reminderDue: return t(("{title}", "Reminder for {when}"), ("{title}", "Напоминание на {when}"))
        case .workoutDue: return t(("Time to train", "{title} at {when}"), ("Пора тренироваться", "{title} в {when}"))
        case .goalProposed:
            return t(("A goal to sponsor", "You were offered a goal with a reward of {reward}."), ("Цель для спонсирования", "Вам предложили цель с наградой {reward}."))
        case .goalAccepted:
            return t(("Your goal was accepted", "A sponsor accepted your goal with a reward of {reward}."), ("Цель принята", "Спонсор принял вашу цель с наградой {reward}."))
        case .goalRejected:
            return t(("Your offer was declined", "A sponsor declined your offer. Open the app to see their answer."),
                ("Предложение отклонено", "Спонсор отклонил ваше предложение. Откройте приложение, чтобы увидеть ответ."))
        case .goalRevised:
            return t(("An offer was revised", "A recipient revised their offer: the reward is now {reward}."), ("Предложение изменено", "Получатель изменил предложение: награда теперь {reward}."))
        case .goalOfferWithdrawn:
            return t(("An offer was withdrawn", "A recipient took back their offer."), ("Предложение отозвано", "Получатель отозвал своё предложение."))
        case .itemChecked: return t(("Progress on a goal", "Done: {item}"), ("Прогресс по цели", "Выполнено: {item}"))
        case .itemUnchecked: return t(("A plan item was unchecked", "Not done after all: {item}"), ("Отметка снята", "Всё-таки не выполнено: {item}"))
        case .commentAdded: return t(("New comment", "You have a new comment on a goal."), ("Новый комментарий", "У вас новый комментарий к цели."))
        case .commentLiked: return t(("Your comment was liked", "Your comment on a goal got a ❤"), ("Вашему комментарию поставили ❤", "Ваш комментарий к цели понравился."))
        case .goalProgress: return t(("Goal progress: {percent}%", "A goal you follow reached {percent}%."), ("Прогресс цели: {percent}%", "Цель, за которой вы следите, выполнена на {percent}%."))
        case .goalCompleted: return t(("Goal completed!", "A goal reached 100%. Congratulations!"), ("Цель достигнута!", "Цель выполнена на 100%. Поздравляем!"))
        case .bookingCreated: return t(("Booking confirmed", "{cable}, {date} at {time}."), ("Бронь подтверждена", "{cable}, {date} в {time}."))
        case .bookingCancelledByPark:
            return t(("The park cancelled your booking", "{cable}, {date} at {time}: cancelled and fully refunded."),
                ("Парк отменил вашу бронь", "{cable}, {date} в {time}: отменено, оплата возвращена полностью."))
        case .bookingSoon: return t(("Your session starts in 2 hours", "{cable} at {time}."), ("Тренировка через 2 часа", "{cable} в {time}."))
        case .bookingSanction:
            return t(("Booking counted under the rules", "Your booking of {date} at {time} was cancelled late or missed: it counts under the cancellation rules."),
                ("Бронь учтена по правилам", "Бронь на {date} в {time} отменена поздно или пропущена: она учтена по правилам отмены."))
        case .installmentDue: return t(("Time to save", "Put aside {amount} for “{plan}” today."), ("Пора откладывать", "Отложите сегодня {amount} на «{plan}»."))
        case .planCompleted: return t(("Target reached!", "“{plan}” reached {target}. Well done!"), ("Цель достигнута!", "«{plan}»: накоплено {target}. Отлично!"))
        case .signedIn:
            return t(("New sign-in", "Your account was just signed in to ({method}). If it was not you, change your password."),
                ("Новый вход", "В ваш аккаунт только что вошли ({method}). Если это были не вы, смените пароль."))
        case .contactChanged:
            return t(("Your {field} was changed", "If you did not do this, contact support at once."), ("Изменён ваш {field}", "Если это сделали не вы, срочно напишите в поддержку."))
        case .announcement: return NotificationTemplate(title: "", body: "")
        }
    }
}
