import Foundation
import Platform
import SharedTesting
import Testing

@testable import StatsService

/// The charts rendered by a real renderer (`rsvg-convert`, Debian's librsvg2-bin) and the
/// PNG looked at: its size, the line's, the slices' and the bars' colors in proportion,
/// the labels' ink. A chart that is not valid SVG (an unescaped `<` in a title, say) fails
/// to render.
@Suite("Charts rendered")
struct ChartSVGTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Renders `svg` to PNG and counts the pixels near each of `colors`.
    static func render(_ svg: String, colors: [String]) throws -> (width: Int, height: Int, counts: [String: Int]) {
        let directory = try TemporaryDirectory(prefix: "chart")
        let source = directory.url.appendingPathComponent("chart.svg"), image = directory.url.appendingPathComponent("chart.png")
        try Data(svg.utf8).write(to: source)
        try Self.run("/usr/bin/env", ["rsvg-convert", "--format=png", "--output", image.path, source.path])
        let colorList = String(decoding: try JSONEncoder().encode(colors), as: UTF8.self)
        let output = try Self.run("/usr/bin/env", ["python3", Self.fixtures.appendingPathComponent("png_colors.py").path, image.path, colorList])
        let reply = try JSONParser.parse(output)
        let counts = (reply["counts"]?.objectValue ?? [:]).mapValues { Int($0.integerValue ?? -1) }
        return (Int(reply["width"]?.integerValue ?? 0), Int(reply["height"]?.integerValue ?? 0), counts)
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let problems = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestStackError("\(arguments.first ?? executable) failed: \(String(decoding: problems, as: UTF8.self))")
        }
        return data
    }

    static let ink = "#222222"

    @Test("a line chart of a month: 640×360, the line drawn across it, labels inked; a title with <, & and quotes still renders")
    func line() throws {
        let points = (1...30).map { ChartSVG.Point(label: "\($0).11", value: $0 % 7 == 0 ? 0 : 100 + $0 * 5) }
        let svg = ChartSVG.line(title: "Performance <1 & \"2\">", points: points, seriesName: "Score per day")
        #expect(svg.contains("Performance &lt;1 &amp; &quot;2&quot;&gt;"))
        let image = try Self.render(svg, colors: [ChartSVG.lineColor, Self.ink])
        #expect(image.width == 640 && image.height == 360)
        #expect(image.counts[ChartSVG.lineColor, default: 0] > 1_500)
        #expect(image.counts[Self.ink, default: 0] > 150)
        #expect(ChartSVG.niceMaximum(0) == 10 && ChartSVG.niceMaximum(250) == 500 && ChartSVG.niceMaximum(101) == 200 && ChartSVG.niceMaximum(100) == 100)
    }

    @Test("a pie of shares: each slice's color in proportion to its percent, zero shares only in the legend; no data says so")
    func pie() throws {
        let slices = [("Chest", 29), ("Back", 0), ("Core", 28), ("Legs", 43)].map { ChartSVG.Slice(label: $0.0, percent: $0.1) }
        let image = try Self.render(ChartSVG.pie(title: "Body parts", slices: slices), colors: Array(ChartSVG.palette.prefix(4)))
        let chest = image.counts[ChartSVG.palette[0], default: 0], back = image.counts[ChartSVG.palette[1], default: 0]
        let core = image.counts[ChartSVG.palette[2], default: 0], legs = image.counts[ChartSVG.palette[3], default: 0]
        // The disc has π × 130² ≈ 53,000 pixels: legs about 43 % of them.
        #expect(legs > 18_000 && legs < 25_000)
        #expect(chest > 12_000 && core > 12_000 && abs(chest - core) < 2_000)
        // Back: its legend square only (14 × 14).
        #expect(back > 100 && back < 400)
        let empty = ChartSVG.pie(title: "Body parts", slices: slices.map { ChartSVG.Slice(label: $0.label, percent: 0) })
        #expect(empty.contains("No exercises in this period"))
        #expect(try Self.render(empty, colors: [Self.ink]).counts[Self.ink, default: 0] > 200)
    }

    @Test("a bar chart in percent: bar heights in proportion")
    func bars() throws {
        let bars = [("Strength", 60), ("Endurance", 30), ("Speed", 10)].map { ChartSVG.Slice(label: $0.0, percent: $0.1) }
        let image = try Self.render(ChartSVG.bars(title: "Motor abilities", bars: bars), colors: Array(ChartSVG.palette.prefix(3)))
        let strength = image.counts[ChartSVG.palette[0], default: 0], endurance = image.counts[ChartSVG.palette[1], default: 0]
        let speed = image.counts[ChartSVG.palette[2], default: 0]
        #expect(speed > 0 && Double(strength) / Double(speed) > 5 && Double(strength) / Double(speed) < 7)
        #expect(Double(endurance) / Double(speed) > 2.5 && Double(endurance) / Double(speed) < 3.5)
    }
}
