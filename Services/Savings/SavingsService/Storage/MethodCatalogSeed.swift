import Foundation
import GRDB
import Platform

/// The presentations the catalog starts with, one per method of ``SavingMethod`` (admins
/// edit them with `savings.admin.methods.save`; the algorithms themselves are code). The
/// last slide of each is where the app offers "choose this method".
enum MethodCatalogSeed {
    struct Slide {
        var title: String
        var text: String
    }

    struct Presentation {
        var method: SavingMethod
        var title: String
        var summary: String
        var slides: [Slide]
    }

    static let presentations: [Presentation] = [
        Presentation(
            method: .equal, title: "Equal installments",
            summary: "Your target split evenly over every interval until your date.",
            slides: [
                Slide(title: "Choose a target and a date", text: "Say how much you want to have and by when: a trip next summer, a new bike by spring."),
                Slide(
                    title: "The same amount each time",
                    text: "We divide the target over the weeks, fortnights or months until then. Any cents that do not divide evenly go to the last installments, so the total is exact."),
                Slide(
                    title: "Missed one? We rebalance",
                    text: "Put aside less, more or later than planned and the rest is spread again over the installments left, so you still arrive on your date."),
                Slide(title: "Start your stash", text: "Pick an interval and a reminder time, and start."),
            ]),
        Presentation(
            method: .fiftyTwoWeek, title: "The 52-week challenge",
            summary: "Start small and put aside a little more every time.",
            slides: [
                Slide(
                    title: "A classic challenge", text: "Week 1 you save 1, week 2 you save 2, … week 52 you save 52: 1,378 by the end of the year."),
                Slide(
                    title: "Scaled to your goal",
                    text: "We scale the steps to your target and to the number of intervals until your date (52 when you give none): each installment is one step larger than the one before."),
                Slide(title: "Easy at first", text: "The first installments are small, so the habit forms before the amounts grow."),
                Slide(title: "Start the challenge", text: "Pick a target, an interval and a reminder time."),
            ]),
        Presentation(
            method: .fiftyTwoWeekReverse, title: "The reverse 52-week challenge",
            summary: "The largest installment first, then a little less every time.",
            slides: [
                Slide(
                    title: "The challenge upside down",
                    text: "Start with the largest installment while your motivation is highest; each one after is one step smaller."),
                Slide(title: "Scaled to your goal", text: "Steps are scaled to your target and your date (52 intervals when you give none)."),
                Slide(title: "Downhill to the finish", text: "The end of the plan is the easiest part, when plans usually stall."),
                Slide(title: "Start the challenge", text: "Pick a target, an interval and a reminder time."),
            ]),
        Presentation(
            method: .incomePercent, title: "A share of your income",
            summary: "Put aside a percentage of what you earn each interval.",
            slides: [
                Slide(title: "Pay yourself first", text: "Tell us what you expect to earn each week, fortnight or month, and what share of it to save."),
                Slide(title: "When you get there", text: "The plan shows each installment and the date your target is reached."),
                Slide(title: "Start saving", text: "Choose the percentage, the interval and a reminder time."),
            ]),
        Presentation(
            method: .fixedAmount, title: "A fixed amount",
            summary: "The same amount you choose, every interval, until the target is reached.",
            slides: [
                Slide(title: "Your amount, your rhythm", text: "Choose an amount you can afford every week, fortnight or month."),
                Slide(title: "See the finish line", text: "The plan shows the date your target is reached; the last installment is only what is left."),
                Slide(title: "Start saving", text: "Choose the amount, the interval and a reminder time."),
            ]),
    ]

    static func insert(_ db: Database) throws {
        let now = Instant.format(Date())
        for (position, presentation) in presentations.enumerated() {
            try db.execute(
                sql: "INSERT INTO method (id, title, summary, position, updated_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [presentation.method.rawValue, presentation.title, presentation.summary, position + 1, now])
            for (index, slide) in presentation.slides.enumerated() {
                try db.execute(
                    sql: "INSERT INTO method_slide (method_id, position, title, text, image_id) VALUES (?, ?, ?, ?, NULL)",
                    arguments: [presentation.method.rawValue, index + 1, slide.title, slide.text])
            }
        }
    }
}
