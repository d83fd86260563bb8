import Foundation
import Platform

/// One field of a panel form and how its text becomes a member of the operation's `data`.
public struct FormField: Sendable {
    public struct Choice: Sendable, Equatable {
        public var value: String
        public var label: String
        public init(_ value: String, _ label: String? = nil) {
            self.value = value
            self.label = label ?? value
        }
    }

    public enum Kind: Sendable, Equatable {
        case text
        case multiline
        case password
        case integer
        /// An amount in the park's currency, typed in major units ("12.50" BYN, "3000" JPY)
        /// and sent in minor units (1250, 3000): the form is given the currency.
        case money
        /// A checkbox: sent `true` or `false` (unticked is left out when the field says so).
        case boolean
        case choice([Choice])
        case date
        case time
        /// A local date and time in the zone the form carries (`_zone`), sent as an instant.
        case localDateTime
        /// JSON typed by hand (a goal type's settings form, a questionnaire's questions).
        case json
        /// An image: a file uploaded through `<service>.media.put`, sent as its id.
        case image(service: String)
        /// A value the page fills in and the person does not see.
        case hidden
        /// A hidden whole number (a slogan's id).
        case hiddenInteger
    }

    /// The member's path in `data`, dots for nesting (`price.minor`).
    public var name: String
    public var label: String
    public var kind: Kind
    public var required: Bool
    public var help: String?
    /// Whether an empty value is sent as `null` (clears it) rather than left out.
    public var nullable: Bool
    /// A checkbox whose unticked state is the service's default: left out rather than sent
    /// `false` (a plan item's `checkable`, which only some kinds may set).
    public var omittedWhenOff: Bool

    public init(
        _ name: String, _ label: String, _ kind: Kind = .text, required: Bool = false, help: String? = nil, nullable: Bool = false,
        omittedWhenOff: Bool = false
    ) {
        self.name = name
        self.label = label
        self.kind = kind
        self.required = required
        self.help = help
        self.nullable = nullable
        self.omittedWhenOff = omittedWhenOff
    }
}

/// A form of the panel, bound to one operation. Forms are declared on the server and
/// posted to `/act/<id>`: the browser never names an operation, so a form a role may not
/// use is refused whatever is posted.
public struct AdminForm: Sendable {
    public var id: String
    public var op: String
    public var role: PanelRole
    public var title: String
    public var submit: String
    public var fields: [FormField]
    /// Asked on a page of its own before the operation runs (destructive actions).
    public var confirm: String?
    /// Shown on the next page after success.
    public var success: String
    public var danger: Bool
    /// Members always sent, whatever is posted (`retired: true`).
    public var fixed: [String: JSONValue]
    /// Whether the call carries an idempotency key (the form's own, so a double submit
    /// does the write once).
    public var sendsIdem: Bool
    /// Whether the form has a Preview button (pushes: how the text will show).
    public var previewable: Bool
    /// When set, the fields other than `outerFields` form one object sent as the only
    /// element of this array (`goals.admin.items.add` takes `items`).
    public var itemsKey: String?
    public var outerFields: Set<String>
    /// Fields whose options the page that shows the form supplies (the day's slots and
    /// cables at the desk). A form shown again on its own after a problem keeps the value
    /// picked there, readable and unchanged, instead of a text box.
    public var pickedOnPage: Set<String>

    public init(
        id: String, op: String, role: PanelRole = .admin, title: String, submit: String = "Save", fields: [FormField],
        confirm: String? = nil, success: String = "Saved.", danger: Bool = false, fixed: [String: JSONValue] = [:], sendsIdem: Bool = true,
        previewable: Bool = false, itemsKey: String? = nil, outerFields: Set<String> = [], pickedOnPage: Set<String> = []
    ) {
        self.pickedOnPage = pickedOnPage
        self.previewable = previewable
        self.itemsKey = itemsKey
        self.outerFields = outerFields
        self.id = id
        self.op = op
        self.role = role
        self.title = title
        self.submit = submit
        self.fields = fields
        self.confirm = confirm
        self.success = success
        self.danger = danger
        self.fixed = fixed
        self.sendsIdem = sendsIdem
    }

    /// The image fields, which are uploaded before the operation is called.
    public var imageFields: [(field: FormField, service: String)] {
        fields.compactMap { field in
            if case .image(let service) = field.kind { return (field, service) }
            return nil
        }
    }

    /// Whether an amount is typed in one of the fields (its currency is needed to read it).
    public var hasMoney: Bool { fields.contains { $0.kind == .money } }

    /// The operation's `data` from posted text, or the problems per field. Image fields
    /// hold an id by now (or nothing, or `<name>__clear`). Amounts are read in `currency`'s
    /// decimals (two when it is not known).
    public func data(from values: [String: String], zone: TimeZone? = nil, currency: Currency? = nil) -> (data: JSONValue, errors: [String: String]) {
        var data = JSONValue.object(fixed)
        var errors: [String: String] = [:]
        for field in fields {
            let raw = (values[field.name] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            var value: JSONValue?
            switch field.kind {
            case .boolean:
                let on = raw == "on" || raw == "true" || raw == "1"
                value = on || !field.omittedWhenOff ? .bool(on) : nil
            case .image:
                if values["\(field.name)__clear"] == "on" {
                    value = .null
                } else if !raw.isEmpty {
                    value = .string(raw)
                } else if field.required {
                    errors[field.name] = "choose an image file"
                }
            default:
                if raw.isEmpty {
                    if field.required {
                        errors[field.name] = "required"
                    } else if field.nullable {
                        value = .null
                    }
                } else {
                    switch Self.convert(raw, kind: field.kind, zone: zone, exponent: currency?.exponent ?? 2) {
                    case .success(let converted): value = converted
                    case .failure(let problem): errors[field.name] = problem.message
                    }
                }
            }
            if let value { data = Self.setting(value, at: field.name.split(separator: ".").map(String.init), in: data) }
        }
        if let itemsKey, var members = data.objectValue {
            var item: [String: JSONValue] = [:]
            for (key, value) in members where !outerFields.contains(key) && fixed[key] == nil {
                item[key] = value
                members[key] = nil
            }
            members[itemsKey] = .array([.object(item)])
            data = .object(members)
        }
        return (data, errors)
    }

    struct Problem: Error {
        var message: String
    }

    static func convert(_ raw: String, kind: FormField.Kind, zone: TimeZone?, exponent: Int = 2) -> Result<JSONValue, Problem> {
        switch kind {
        case .integer, .hiddenInteger:
            guard let number = Int64(raw) else { return .failure(Problem(message: "a whole number, e.g. 12")) }
            return .success(.integer(number))
        case .money:
            guard let minor = MoneyText.minorUnits(raw, exponent: exponent) else {
                return .failure(Problem(message: exponent > 0 ? "an amount such as 12.50" : "a whole amount"))
            }
            return .success(.integer(minor))
        case .json:
            guard let value = try? JSONParser.parse(Data(raw.utf8)) else {
                return .failure(Problem(message: "not valid JSON (check the quotes, commas and brackets)"))
            }
            return .success(value)
        case .localDateTime:
            guard let zone, let date = LocalDateTimeText.instant(raw, zone: zone) else {
                return .failure(Problem(message: "a date and time such as 2026-11-23T18:30"))
            }
            return .success(.string(Instant.format(date)))
        case .date:
            guard LocalDate(raw) != nil else { return .failure(Problem(message: "a date such as 2026-11-23")) }
            return .success(.string(raw))
        case .time:
            guard raw.count == 5, raw.dropFirst(2).first == ":", let hours = Int(raw.prefix(2)), let minutes = Int(raw.suffix(2)),
                (0..<24).contains(hours), (0..<60).contains(minutes)
            else { return .failure(Problem(message: "a time such as 09:30")) }
            return .success(.string(raw))
        case .choice(let choices):
            guard choices.contains(where: { $0.value == raw }) else { return .failure(Problem(message: "choose one of the options")) }
            return .success(.string(raw))
        default:
            return .success(.string(raw))
        }
    }

    /// `value` set at a dotted path, creating objects on the way.
    static func setting(_ value: JSONValue, at path: [String], in target: JSONValue) -> JSONValue {
        guard let first = path.first else { return value }
        var members = target.objectValue ?? [:]
        members[first] = setting(value, at: Array(path.dropFirst()), in: members[first] ?? .object([:]))
        return .object(members)
    }

    /// The text each field shows for `current` (an object as the services answer it),
    /// amounts in `currency`'s decimals.
    public func values(from current: JSONValue, zone: TimeZone? = nil, currency: Currency? = nil) -> [String: String] {
        var values: [String: String] = [:]
        for field in fields {
            var value: JSONValue? = current
            for part in field.name.split(separator: ".") { value = value?[String(part)] }
            guard let value, value != .null else { continue }
            values[field.name] = Self.text(of: value, kind: field.kind, zone: zone, exponent: currency?.exponent ?? 2)
        }
        return values
    }

    static func text(of value: JSONValue, kind: FormField.Kind, zone: TimeZone?, exponent: Int = 2) -> String {
        switch (kind, value) {
        case (.boolean, .bool(let flag)): return flag ? "on" : ""
        case (.money, .integer(let minor)): return MoneyText.majorUnits(minor, exponent: exponent)
        case (.json, _): return value.prettyPrinted
        case (.localDateTime, .string(let text)):
            guard let zone, let date = Instant.parse(text) else { return text }
            return LocalDateTimeText.text(date, zone: zone)
        case (_, .string(let text)): return text
        case (_, .integer(let number)): return String(number)
        case (_, .number(let number)): return String(number)
        case (_, .bool(let flag)): return flag ? "on" : ""
        default: return value.prettyPrinted
        }
    }

    /// Puts the service's field problems (`price.minor`, `form.fields[0].key`) beside the
    /// field they belong to; the rest stay for the top of the form.
    public func placing(_ problems: [String: String]) -> (byField: [String: String], general: [String]) {
        var byField: [String: String] = [:]
        var general: [String] = []
        for (reported, problem) in problems.sorted(by: { $0.key < $1.key }) {
            var path = reported
            if let itemsKey, path.hasPrefix("\(itemsKey)[0].") { path = String(path.dropFirst(itemsKey.count + 4)) }
            let owner = fields.filter { path == $0.name || path.hasPrefix($0.name + ".") || path.hasPrefix($0.name + "[") }
                .max { $0.name.count < $1.name.count }
            if let owner, owner.kind != .hidden, owner.kind != .hiddenInteger {
                let detail = path == owner.name ? problem : "\(path.dropFirst(owner.name.count)): \(problem)"
                byField[owner.name] = byField[owner.name].map { "\($0); \(detail)" } ?? detail
            } else {
                general.append(path.isEmpty ? problem : "\(path): \(problem)")
            }
        }
        return (byField, general)
    }
}

/// Amounts typed by people, in major units, and back.
public enum MoneyText {
    /// "12.5" → 1250 with exponent 2; `nil` for anything else (more decimals than the
    /// currency has, signs other than a leading minus, letters).
    public static func minorUnits(_ text: String, exponent: Int) -> Int64? {
        var text = text.replacingOccurrences(of: ",", with: ".").replacingOccurrences(of: " ", with: "")
        var negative = false
        if text.hasPrefix("-") {
            negative = true
            text.removeFirst()
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCII), whole.allSatisfy(\.isNumber), whole.count <= 15
        else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= exponent, fraction.allSatisfy({ $0.isASCII && $0.isNumber }), parts.count == 1 || !fraction.isEmpty else { return nil }
        fraction += String(repeating: "0", count: exponent - fraction.count)
        guard let major = Int64(whole), let minor = Int64(fraction.isEmpty ? "0" : fraction) else { return nil }
        var scale: Int64 = 1
        for _ in 0..<exponent { scale *= 10 }
        let (product, overflow) = major.multipliedReportingOverflow(by: scale)
        guard !overflow else { return nil }
        return negative ? -(product + minor) : product + minor
    }

    /// 1250 → "12.50" with exponent 2.
    public static func majorUnits(_ minor: Int64, exponent: Int) -> String {
        let parts = parts(minor, exponent: exponent)
        return (parts.negative ? "-" : "") + String(parts.major) + (parts.fraction.isEmpty ? "" : "." + parts.fraction)
    }

    /// An amount's sign, whole major units and fraction digits (`exponent` of them, none
    /// for exponent 0): -1250 → (true, 12, "50") with exponent 2.
    public static func parts(_ minor: Int64, exponent: Int) -> (negative: Bool, major: UInt64, fraction: String) {
        var scale: UInt64 = 1
        for _ in 0..<exponent { scale *= 10 }
        let magnitude = minor.magnitude
        guard exponent > 0 else { return (minor < 0, magnitude, "") }
        let fraction = String(magnitude % scale)
        return (minor < 0, magnitude / scale, String(repeating: "0", count: exponent - fraction.count) + fraction)
    }
}

/// The `datetime-local` inputs' text ("2026-11-23T18:30") in a zone.
public enum LocalDateTimeText {
    public static func instant(_ text: String, zone: TimeZone) -> Date? {
        let parts = text.split(separator: "T")
        guard parts.count == 2, let date = LocalDate(String(parts[0])) else { return nil }
        let clock = parts[1].split(separator: ":")
        guard clock.count >= 2, let hour = Int(clock[0]), let minute = Int(clock[1]), (0..<24).contains(hour), (0..<60).contains(minute)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day, hour: hour, minute: minute))
    }

    public static func text(_ date: Date, zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return "\(Instant.digits(parts.year ?? 0, width: 4))-\(Instant.digits(parts.month ?? 0, width: 2))-\(Instant.digits(parts.day ?? 0, width: 2))T"
            + "\(Instant.digits(parts.hour ?? 0, width: 2)):\(Instant.digits(parts.minute ?? 0, width: 2))"
    }
}
