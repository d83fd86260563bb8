import Foundation
import Platform

/// Charts as SVG, drawn on the server: a bar per point, labelled so a person reads them
/// at a glance (the largest value on the axis, the first, middle and last labels under
/// the bars, each bar's value in its tooltip). Pure: the same points give the same text.
public enum SVGChart {
    public struct Point: Sendable, Equatable {
        public var label: String
        public var value: Double
        public init(_ label: String, _ value: Double) {
            self.label = label
            self.value = value
        }
    }

    /// A bar chart of `points`, `title` read by screen readers. `unit` follows values.
    public static func bars(_ points: [Point], title: String, unit: String = "", width: Int = 640, height: Int = 200, color: String = "#2f6fb0") -> String {
        let left = 48.0
        let bottom = 28.0
        let top = 12.0
        let plotWidth = Double(width) - left - 8
        let plotHeight = Double(height) - bottom - top
        let maximum = niceCeiling(points.map(\.value).max() ?? 0)
        var svg = ##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \##(width) \##(height)" role="img" aria-label="\##(escape(title))">"##
        svg += "<title>\(escape(title))</title>"
        // Axis: zero and the maximum, with a light grid line at the top and the middle.
        for fraction in [0.0, 0.5, 1.0] {
            let y = top + plotHeight * (1 - fraction)
            svg += ##"<line x1="\##(format(left))" y1="\##(format(y))" x2="\##(width - 8)" y2="\##(format(y))" stroke="#d8dde3" stroke-width="1"/>"##
            svg += ##"<text x="\##(format(left - 6))" y="\##(format(y + 4))" text-anchor="end" font-size="11" fill="#555">\##(escape(number(maximum * fraction)))\##(escape(unit))</text>"##
        }
        guard !points.isEmpty else {
            svg += ##"<text x="\##(format(left + plotWidth / 2))" y="\##(format(top + plotHeight / 2))" text-anchor="middle" font-size="13" fill="#777">no data</text></svg>"##
            return svg
        }
        let slot = plotWidth / Double(points.count)
        let barWidth = max(1, slot * 0.75)
        for (index, point) in points.enumerated() {
            let barHeight = maximum > 0 ? plotHeight * max(0, point.value) / maximum : 0
            let x = left + slot * Double(index) + (slot - barWidth) / 2
            let y = top + plotHeight - barHeight
            svg += ##"<rect x="\##(format(x))" y="\##(format(y))" width="\##(format(barWidth))" height="\##(format(barHeight))" fill="\##(color)">"##
            svg += "<title>\(escape(point.label)): \(escape(number(point.value)))\(escape(unit))</title></rect>"
        }
        var labelled = Set([0, points.count / 2, points.count - 1])
        if points.count <= 12 { labelled = Set(points.indices) }
        for index in labelled.sorted() {
            // The first and last labels lean inwards, so they stay inside the chart.
            let anchor = points.count > 12 && index == 0 ? "start" : points.count > 12 && index == points.count - 1 ? "end" : "middle"
            let x = anchor == "start" ? left : anchor == "end" ? Double(width - 8) : left + slot * (Double(index) + 0.5)
            svg += ##"<text x="\##(format(x))" y="\##(height - 8)" text-anchor="\##(anchor)" font-size="11" fill="#555">\##(escape(points[index].label))</text>"##
        }
        return svg + "</svg>"
    }

    /// The smallest of 1, 2, 2.5, 5 × a power of ten at or above `value` (0 stays 0...
    /// but an empty chart still needs a scale, so 0 becomes 1).
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let power = pow(10, floor(log10(value)))
        for step in [1.0, 2.0, 2.5, 5.0, 10.0] where step * power >= value { return step * power }
        return 10 * power
    }

    static func number(_ value: Double) -> String {
        guard value != value.rounded() || abs(value) >= 1e15 else { return String(Int64(value)) }
        var text = String(format: "%.2f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Text for SVG/HTML (``Markup/escaped(_:)``).
    public static func escape(_ text: String) -> String { Markup.escaped(text) }
}
