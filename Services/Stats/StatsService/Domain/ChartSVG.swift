import Foundation
import Platform

/// Charts people can look at (the admin panel shows them; the app draws its own): SVG
/// text with a title, axes, labels and a legend. Pure functions of the statistics, so
/// the same figures always give the same bytes.
///
/// - ``line(title:points:seriesName:)``: a line chart of daily values (the performance
///   series): y axis from 0 to a round maximum with five grid lines, x labels `DD.MM`
///   (every day up to 14 days, else about seven of them), the values as a line with a
///   dot per day.
/// - ``pie(title:slices:)``: a pie of shares (body parts); categories with 0 % are left
///   out of the pie and listed in the legend.
/// - ``bars(title:bars:)``: a bar chart of shares in percent (motor abilities), 0-100 %.
///
/// Every text is XML-escaped. A chart with nothing to show says so in its middle.
enum ChartSVG {
    static let width = 640
    static let height = 360
    /// Colors of series and categories, in order (colorblind-safe, Okabe-Ito).
    static let palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
    static let lineColor = palette[0]

    struct Point: Sendable, Hashable {
        var label: String
        var value: Int
    }

    struct Slice: Sendable, Hashable {
        var label: String
        var percent: Int
    }

    static func escape(_ text: String) -> String { Markup.escaped(text) }

    /// A number with at most two decimals, as SVG coordinates want it.
    static func number(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// The smallest "round" number (1, 2, 2.5 or 5 × a power of ten) at or above `value`.
    static func niceMaximum(_ value: Int) -> Int {
        guard value > 0 else { return 10 }
        var magnitude = 1
        while magnitude * 10 <= value { magnitude *= 10 }
        for step in [1, 2, 5, 10] where step * magnitude >= value { return step * magnitude }
        return 10 * magnitude
    }

    static func document(title: String, _ body: String) -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" font-family="DejaVu Sans, Arial, sans-serif">
        <rect x="0" y="0" width="\(width)" height="\(height)" fill="#ffffff"/>
        <text x="\(width / 2)" y="28" font-size="18" text-anchor="middle" fill="#222222">\(escape(title))</text>
        \(body)</svg>

        """
    }

    static func empty(_ message: String) -> String {
        "<text x=\"\(width / 2)\" y=\"\(height / 2)\" font-size=\"14\" text-anchor=\"middle\" fill=\"#666666\">\(escape(message))</text>\n"
    }

    /// The plot area of the line and bar charts.
    static let (left, right, top, bottom) = (56.0, Double(width) - 24, 56.0, Double(height) - 56)

    /// Five grid lines above the x axis labelled by `label(step)` (0...5), and the axes.
    static func axes(_ label: (Int) -> String) -> String {
        var body = ""
        for step in 0...5 {
            let y = bottom - (bottom - top) * Double(step) / 5
            body += "<line x1=\"\(number(left))\" y1=\"\(number(y))\" x2=\"\(number(right))\" y2=\"\(number(y))\" stroke=\"#dddddd\" stroke-width=\"1\"/>\n"
            body += "<text x=\"\(number(left - 8))\" y=\"\(number(y + 4))\" font-size=\"11\" text-anchor=\"end\" fill=\"#444444\">\(escape(label(step)))</text>\n"
        }
        body += "<line x1=\"\(number(left))\" y1=\"\(number(top))\" x2=\"\(number(left))\" y2=\"\(number(bottom))\" stroke=\"#222222\" stroke-width=\"1.5\"/>\n"
        body += "<line x1=\"\(number(left))\" y1=\"\(number(bottom))\" x2=\"\(number(right))\" y2=\"\(number(bottom))\" stroke=\"#222222\" stroke-width=\"1.5\"/>\n"
        return body
    }

    static func line(title: String, points: [Point], seriesName: String, emptyMessage: String = "No training in this period") -> String {
        let maximum = niceMaximum(points.map(\.value).max() ?? 0)
        var body = axes { step in number(Double(maximum) * Double(step) / 5) }
        guard !points.isEmpty else { return document(title: title, body + empty(emptyMessage)) }
        let stepX = points.count > 1 ? (right - left) / Double(points.count - 1) : 0
        func x(_ index: Int) -> Double { points.count > 1 ? left + stepX * Double(index) : (left + right) / 2 }
        func y(_ value: Int) -> Double { bottom - (bottom - top) * Double(value) / Double(maximum) }
        let every = points.count <= 14 ? 1 : Int((Double(points.count) / 7).rounded(.up))
        for (index, point) in points.enumerated() where index % every == 0 || index == points.count - 1 {
            body += "<text x=\"\(number(x(index)))\" y=\"\(number(bottom + 18))\" font-size=\"11\" text-anchor=\"middle\" fill=\"#444444\">\(escape(point.label))</text>\n"
        }
        let path = points.enumerated().map { "\(number(x($0.offset))),\(number(y($0.element.value)))" }.joined(separator: " ")
        body += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(lineColor)\" stroke-width=\"3\"/>\n"
        for (index, point) in points.enumerated() {
            body += "<circle cx=\"\(number(x(index)))\" cy=\"\(number(y(point.value)))\" r=\"4\" fill=\"\(lineColor)\"/>\n"
        }
        // Legend.
        body += "<rect x=\"\(number(right - 150))\" y=\"40\" width=\"14\" height=\"4\" fill=\"\(lineColor)\"/>\n"
        body += "<text x=\"\(number(right - 130))\" y=\"46\" font-size=\"12\" fill=\"#222222\">\(escape(seriesName))</text>\n"
        if points.allSatisfy({ $0.value == 0 }) { body += empty(emptyMessage) }
        return document(title: title, body)
    }

    static func pie(title: String, slices: [Slice], emptyMessage: String = "No exercises in this period") -> String {
        let centerX = 200.0, centerY = 195.0, radius = 130.0
        var body = ""
        let total = slices.reduce(0) { $0 + max(0, $1.percent) }
        var angle = -Double.pi / 2
        for (index, slice) in slices.enumerated() {
            let color = palette[index % palette.count]
            if total > 0 && slice.percent > 0 {
                let sweep = 2 * Double.pi * Double(slice.percent) / Double(total)
                if slice.percent >= total {
                    body += "<circle cx=\"\(number(centerX))\" cy=\"\(number(centerY))\" r=\"\(number(radius))\" fill=\"\(color)\"/>\n"
                } else {
                    let end = angle + sweep
                    let start = (centerX + radius * cos(angle), centerY + radius * sin(angle))
                    let stop = (centerX + radius * cos(end), centerY + radius * sin(end))
                    body += "<path d=\"M \(number(centerX)) \(number(centerY)) L \(number(start.0)) \(number(start.1)) A \(number(radius)) \(number(radius)) 0 \(sweep > Double.pi ? 1 : 0) 1 \(number(stop.0)) \(number(stop.1)) Z\" fill=\"\(color)\" stroke=\"#ffffff\" stroke-width=\"1\"/>\n"
                }
                angle += sweep
            }
            // Legend, every category with its percent.
            let legendY = 70.0 + Double(index) * 24
            body += "<rect x=\"380\" y=\"\(number(legendY - 11))\" width=\"14\" height=\"14\" fill=\"\(color)\"/>\n"
            body += "<text x=\"402\" y=\"\(number(legendY))\" font-size=\"13\" fill=\"#222222\">\(escape(slice.label)) \(slice.percent) %</text>\n"
        }
        if total == 0 { body += empty(emptyMessage) }
        return document(title: title, body)
    }

    static func bars(title: String, bars: [Slice], emptyMessage: String = "No exercises in this period") -> String {
        var body = axes { step in "\(step * 20) %" }
        let slot = (right - left) / Double(max(1, bars.count))
        for (index, bar) in bars.enumerated() {
            let color = palette[index % palette.count]
            let heightOfBar = (bottom - top) * Double(min(100, max(0, bar.percent))) / 100
            let x = left + slot * Double(index) + slot * 0.2
            body += "<rect x=\"\(number(x))\" y=\"\(number(bottom - heightOfBar))\" width=\"\(number(slot * 0.6))\" height=\"\(number(heightOfBar))\" fill=\"\(color)\"/>\n"
            body += "<text x=\"\(number(x + slot * 0.3))\" y=\"\(number(bottom + 18))\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222222\">\(escape(bar.label))</text>\n"
            body += "<text x=\"\(number(x + slot * 0.3))\" y=\"\(number(bottom - heightOfBar - 6))\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222222\">\(bar.percent) %</text>\n"
        }
        if bars.allSatisfy({ $0.percent == 0 }) { body += empty(emptyMessage) }
        return document(title: title, body)
    }
}
