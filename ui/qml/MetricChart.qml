// MetricChart: one Qt Charts plot of a run's metrics (MetricsModel), in a Card. `specs` lists the
// series: {key, name, color, kind: "line" | "scatter", width}. The points go in through
// MetricsModel.fillSeries (one replace() per series, not one append per point), at most every
// 200 ms while a run trains. A log scale swaps the y axis for a LogValueAxis.
// Every part of the chart (axes, their titles, grid, legend, background) takes Style's chart colours,
// so it follows the light / dark theme; Qt Charts' own theme would paint light-theme text on dark.
// Ticks fall on round numbers (1, 2 or 5 times a power of ten) and are labelled with just the digits
// that step needs ("2550", "0.0003", never "2.55e+03"); all these metrics are >= 0, so an axis never
// dips below zero (unless a series does). Before the first point the chart says so instead of showing a 0..1 grid.
// An optional `band` ({low, high}; an open side is +-Infinity) shades the metric's healthy range under the
// curves, clipped to the plot area, with a line at each finite edge.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtCharts
import Workbench.Ui

Card {
    id: card

    property MetricsModel metrics
    property var specs: []
    property bool logScale: false
    property string yTitle
    // The healthy range to shade, {low, high}; null or {} for none.
    property var band: null
    readonly property bool hasBand: !!band && band.low !== undefined && band.high !== undefined
    // Extra controls shown in the title row (a smoothing slider, a log toggle).
    property alias tools: toolRow.data
    readonly property alias chart: chart
    // No point in any series yet.
    property bool empty: true
    readonly property string emptyText: qsTr("No data yet: the curve appears with the run's first steps.")

    padding: 14
    Layout.fillWidth: true
    Layout.preferredHeight: 280

    RowLayout {
        id: toolRow
        spacing: Style.gap
        Layout.fillWidth: true
        visible: children.length > 0
    }

    ChartView {
        id: chart
        Layout.fillWidth: true
        Layout.fillHeight: true
        Layout.minimumHeight: 160
        antialiasing: true
        legend.visible: card.specs.length > 1
        legend.alignment: Qt.AlignTop
        legend.labelColor: Style.chartLabel
        legend.color: "transparent"
        legend.borderColor: "transparent"
        titleColor: Style.chartTitle
        backgroundColor: "transparent"
        plotAreaColor: "transparent"
        margins { left: 0; right: 0; top: 0; bottom: 0 }
        backgroundRoundness: 0

        ValueAxis {
            id: xAxis
            min: 0
            max: 1
            tickType: ValueAxis.TicksDynamic
            tickAnchor: 0
            tickInterval: 1
            labelsVisible: !card.empty
            gridVisible: !card.empty
            labelFormat: "%d"
            titleText: qsTr("step")
            labelsColor: Style.chartLabel
            titleBrush: Style.chartTitle
            color: Style.chartAxisLine
            gridLineColor: Style.chartGrid
            minorGridLineColor: Style.chartMinorGrid
            shadesVisible: false
            lineVisible: false
            labelsFont.pixelSize: 11
            titleFont.pixelSize: 11
        }
        ValueAxis {
            id: linAxis
            visible: !card.logScale
            tickType: ValueAxis.TicksDynamic
            tickAnchor: 0
            tickInterval: 0.25
            labelsVisible: !card.empty
            gridVisible: !card.empty
            titleText: card.yTitle
            labelsColor: Style.chartLabel
            titleBrush: Style.chartTitle
            color: Style.chartAxisLine
            gridLineColor: Style.chartGrid
            minorGridLineColor: Style.chartMinorGrid
            shadesVisible: false
            lineVisible: false
            labelFormat: "%.2f"
            labelsFont.pixelSize: 11
            titleFont.pixelSize: 11
        }
        LogValueAxis {
            id: logAxis
            visible: card.logScale
            labelsVisible: !card.empty
            gridVisible: !card.empty
            base: 10
            titleText: card.yTitle
            labelsColor: Style.chartLabel
            titleBrush: Style.chartTitle
            color: Style.chartAxisLine
            gridLineColor: Style.chartGrid
            minorGridLineColor: Style.chartMinorGrid
            shadesVisible: false
            lineVisible: false
            labelFormat: "%.3g"
            labelsFont.pixelSize: 11
            titleFont.pixelSize: 11
        }
    }

    // The healthy band, under the curves (a child of the chart with a negative z is drawn before it).
    Item {
        id: bandLayer
        parent: chart
        z: -1
        x: chart.plotArea.x
        y: chart.plotArea.y
        width: chart.plotArea.width
        height: chart.plotArea.height
        visible: card.hasBand && !card.empty

        // A value's distance from the plot's top, in pixels, clamped to the plot.
        function toY(v) {
            const lo = card.logScale ? logAxis.min : linAxis.min
            const hi = card.logScale ? logAxis.max : linAxis.max
            let t
            if (card.logScale) t = v <= lo ? 0 : (Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo))
            else t = (v - lo) / (hi - lo)
            if (!(t === t)) t = 0  // NaN: an empty axis
            return (1 - Math.max(0, Math.min(1, t))) * height
        }
        readonly property real topY: card.hasBand ? toY(card.band.high) : 0
        readonly property real bottomY: card.hasBand ? toY(card.band.low) : 0

        Rectangle {
            objectName: "healthyBand"
            y: bandLayer.topY
            width: parent.width
            height: Math.max(0, bandLayer.bottomY - bandLayer.topY)
            color: Style.good
            opacity: Style.dark ? 0.13 : 0.10
        }
        Rectangle {
            visible: card.hasBand && isFinite(card.band.high) && bandLayer.topY > 0
            y: bandLayer.topY
            width: parent.width
            height: 1
            color: Style.good
            opacity: 0.6
        }
        Rectangle {
            visible: card.hasBand && isFinite(card.band.low) && bandLayer.bottomY < bandLayer.height
            y: bandLayer.bottomY - 1
            width: parent.width
            height: 1
            color: Style.good
            opacity: 0.6
        }
    }

    Label {
        objectName: "chartEmptyText"
        parent: chart
        anchors.centerIn: parent
        width: Math.min(parent.width - 40, implicitWidth)
        visible: card.empty
        text: card.emptyText
        color: Style.textMuted
        font.pixelSize: Style.fontSmall
        wrapMode: Text.Wrap
        horizontalAlignment: Text.AlignHCenter
    }

    function rebuild() {
        chart.removeAllSeries()
        for (let i = 0; i < specs.length; ++i) {
            const s = specs[i]
            const type = s.kind === "scatter" ? ChartView.SeriesTypeScatter : ChartView.SeriesTypeLine
            const series = chart.createSeries(type, s.name, xAxis, logScale ? logAxis : linAxis)
            series.color = s.color
            if (s.kind === "scatter") {
                series.markerSize = s.width || 9
                series.borderColor = s.color
            } else {
                series.width = s.width || 2
            }
        }
        refresh()
    }

    function refresh() {
        if (!metrics || chart.count !== specs.length) return
        let lo = Infinity, hi = -Infinity
        for (let i = 0; i < specs.length; ++i) {
            if (metrics.fillSeries(chart.series(i), specs[i].key, logScale) === 0) continue
            const r = metrics.range(specs[i].key, logScale)
            lo = Math.min(lo, r.min)
            hi = Math.max(hi, r.max)
        }
        const steps = Math.max(1, metrics.totalSteps, metrics.lastStep)
        Style.setAxisTicks(xAxis, xAxis.min, steps, Math.max(1, Style.niceStep(steps, 5)))
        empty = !isFinite(lo)
        if (empty) { lo = logScale ? 0.1 : 0; hi = 1 }
        if (logScale) {
            logAxis.min = lo / 1.2
            logAxis.max = hi * 1.2
        } else {
            const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.1 || 1
            const step = Style.niceStep(hi - lo + 2 * pad, 5)
            // Learning rate, losses, norms and speeds are never negative: no axis below zero for them.
            const min = lo >= 0 ? Math.max(0, lo - pad) : lo - pad
            linAxis.labelFormat = Style.tickFormat(step)
            Style.setAxisTicks(linAxis, Math.floor(min / step) * step, Math.ceil((hi + pad) / step) * step, step)
        }
    }

    Timer {
        id: throttle
        interval: 200
        onTriggered: card.refresh()
    }
    Connections {
        target: card.metrics
        function onCountChanged() { if (!throttle.running) throttle.start() }
        function onSmoothingChanged() { card.refresh() }
    }
    onLogScaleChanged: rebuild()
    onSpecsChanged: rebuild()
    Component.onCompleted: rebuild()
}
