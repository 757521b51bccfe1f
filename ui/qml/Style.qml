// Style: the app's design tokens (spacing, sizes, colours) in one place, for light and dark.
// Material supplies the controls; these colours are for the app's own surfaces around them.
pragma Singleton
import QtQuick
import Workbench.Ui

QtObject {
    readonly property bool dark: App.settings.darkTheme

    // Spacing on a 4 px grid.
    readonly property int gap: 8
    readonly property int gapSmall: 4
    readonly property int gapLarge: 16
    readonly property int pagePadding: 28
    readonly property int radius: 10
    readonly property int railWidth: 228

    // Type scale (pixels).
    readonly property int fontSmall: 12
    readonly property int fontBody: 14
    readonly property int fontTitle: 24
    readonly property int fontSection: 15

    readonly property color accent: dark ? "#9fa8ff" : "#3f51b5"
    readonly property color accentSoft: dark ? "#2d3357" : "#e6e9fa"
    readonly property color window: dark ? "#17191d" : "#f4f5f8"
    readonly property color surface: dark ? "#21242a" : "#ffffff"
    readonly property color surfaceAlt: dark ? "#1c1f24" : "#f8f9fb"
    readonly property color rail: dark ? "#121418" : "#eceef3"
    readonly property color border: dark ? "#30343c" : "#dfe2e8"
    readonly property color text: dark ? "#e7e9ed" : "#1c2027"
    readonly property color textMuted: dark ? "#9aa1ad" : "#5e6573"
    readonly property color textFaint: dark ? "#6d7480" : "#8a909c"
    readonly property color good: dark ? "#7fd39a" : "#2e7d32"
    readonly property color warn: dark ? "#f3c06b" : "#b26a00"
    readonly property color error: dark ? "#ffb4ab" : "#b3261e"
    readonly property color errorSoft: dark ? "#3a1f22" : "#fcebea"
    readonly property color errorBorder: dark ? "#6b2f33" : "#f2c4c0"
    readonly property color infoSoft: dark ? "#1f2a3a" : "#eaf1fb"
    readonly property color infoBorder: dark ? "#2f4566" : "#c4d7f2"
    // A search hit in the conversation: a marker's yellow, kept soft so the text stays readable.
    readonly property color findSoft: dark ? "#37321f" : "#fff5d1"
    readonly property color findBorder: dark ? "#6b5a2a" : "#ecd28a"
    readonly property string monoFont: "DejaVu Sans Mono"

    // Qt Charts: its built-in themes know nothing of ours (and a ChartView theme change would recolour
    // the series), so every chart part takes these instead.
    readonly property color chartLabel: textMuted
    readonly property color chartTitle: textMuted
    readonly property color chartAxisLine: dark ? "#4a505b" : "#c3c8d2"
    readonly property color chartGrid: border
    readonly property color chartMinorGrid: dark ? "#272a31" : "#eef0f4"

    // Token probability bands, shared by the token view and its legend (most to least likely).
    readonly property var probBands: [
        { min: 0.7, label: "≥ 70%", color: dark ? "#1f4a2e" : "#d5f0dc" },
        { min: 0.3, label: "30–70%", color: dark ? "#47421d" : "#f6efc4" },
        { min: 0.1, label: "10–30%", color: dark ? "#553a1c" : "#fbdcc0" },
        { min: 0.0, label: "< 10%", color: dark ? "#5a2528" : "#f8cdcd" }
    ]
    function probColor(p) {
        for (let i = 0; i < probBands.length; ++i)
            if (p >= probBands[i].min) return probBands[i].color
        return probBands[probBands.length - 1].color
    }

    // Chart ticks on round numbers: a step of 1, 2 or 5 times a power of ten giving about `count`
    // ticks over `span`, and the printf format that shows that step's digits and no more (0.0005 →
    // "%.4f", 250 → "%.0f"), so axes never read "2.55e+03" or "0 0 0 0 1".
    function niceStep(span, count) {
        if (!(span > 0) || !isFinite(span)) return 1
        const raw = span / count
        const power = Math.pow(10, Math.floor(Math.log10(raw)))
        const f = raw / power
        return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power
    }
    // Sets a ValueAxis (dynamic ticks) to [min, max] with a tick every `step`. Qt Charts lays out every
    // tick at each assignment, so a small step set while the old, wide range is still there (or a wide
    // range while an old small step is) would make millions of ticks and hold the GUI thread for minutes:
    // the interval first covers the old and the new range together, then the range moves, then the step.
    function setAxisTicks(axis, min, max, step) {
        const span = Math.max(axis.max, max) - Math.min(axis.min, min)
        axis.tickInterval = Math.max(step, isFinite(span) ? span / 10 : step)
        axis.min = min
        axis.max = max
        axis.tickInterval = step
    }
    function tickFormat(step) {
        return "%." + Math.max(0, Math.min(8, -Math.floor(Math.log10(step) + 1e-9))) + "f"
    }

    // A byte count as people read memory sizes: "812 MiB", "3.4 GiB"; "—" when unknown (negative).
    function bytes(b) {
        if (!isFinite(b) || b < 0) return "—"
        return b >= 1073741824 ? (b / 1073741824).toFixed(1) + " GiB" : Math.max(1, Math.round(b / 1048576)) + " MiB"
    }
}
