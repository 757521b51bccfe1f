// RunsPage: every training run with its base model, method, final loss and status; tick runs to overlay
// their loss curves (EMA-smoothed train loss, one colour per run). The selected run shows the command
// that repeats it. Each row's actions: open the tuned model, evaluate it (the Train page's wizard), delete.
import QtQml
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtCharts
import Workbench.Ui

Item {
    id: page
    objectName: "page_runs"
    signal goToPlaygroundRequested()
    signal evaluateRequested(var runId)

    property string actionMessage
    property var pendingDelete: ({})  // the run the delete dialog asks about

    readonly property var runColors: ["#3f51b5", "#e65100", "#2e7d32", "#c2185b", "#00838f", "#6d4c41", "#7b1fa2", "#9e9d24"]

    RunListModel { id: runs; objectName: "runsModel"; jobs: App.training }

    ColumnLayout {
        anchors.fill: parent
        spacing: Style.gapLarge

        PageHeader {
            title: qsTr("Runs")
            subtitle: runs.count > 0 ? qsTr("%n training run(s). Tick runs to compare their loss curves.", "", runs.count)
                                     : qsTr("Training runs appear here once started on the Train page.")
            Layout.fillWidth: true
            Layout.topMargin: Style.pagePadding
            Layout.leftMargin: Style.pagePadding
            Layout.rightMargin: Style.pagePadding
        }

        RowLayout {
            spacing: Style.gapLarge
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.leftMargin: Style.pagePadding
            Layout.rightMargin: Style.pagePadding
            Layout.bottomMargin: Style.pagePadding

            Card {
                title: qsTr("History")
                padding: 12
                Layout.preferredWidth: Math.min(520, page.width * 0.45)
                Layout.fillHeight: true

                ListView {
                    id: list
                    objectName: "runsList"
                    model: runs
                    clip: true
                    spacing: 2
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    delegate: ItemDelegate {
                        required property int index
                        required property var runId
                        required property string name
                        required property string status
                        required property string recipe
                        required property string baseModelName
                        required property string method
                        required property var finalLoss
                        required property var totalSteps
                        required property var createdMs
                        required property bool selected
                        required property string command
                        required property string outputDir
                        width: ListView.view.width
                        highlighted: ListView.isCurrentItem
                        onClicked: ListView.view.currentIndex = index
                        contentItem: RowLayout {
                            spacing: Style.gap
                            CheckBox {
                                checked: selected
                                onToggled: runs.setSelected(runId, checked)
                            }
                            Rectangle {
                                width: 10; height: 10; radius: 5
                                visible: selected
                                color: page.runColors[Math.max(0, runs.selectedIds.indexOf(runId)) % page.runColors.length]
                            }
                            ColumnLayout {
                                spacing: 0
                                Layout.fillWidth: true
                                Label { text: name; color: Style.text; elide: Text.ElideRight; Layout.fillWidth: true }
                                Label {
                                    objectName: "runDetails"
                                    text: qsTr("%1 · %2 · %3 · %4 steps").arg(baseModelName || "—")
                                          .arg(recipe === "sft" ? qsTr("chat fine-tune") : qsTr("pretrain")).arg(method).arg(totalSteps)
                                    color: Style.textMuted
                                    font.pixelSize: Style.fontSmall
                                    elide: Text.ElideRight
                                    Layout.fillWidth: true
                                }
                                Label {
                                    text: (finalLoss !== undefined ? qsTr("final loss %1 · ").arg(Number(finalLoss).toFixed(3)) : "")
                                          + new Date(createdMs).toLocaleString(Qt.locale(), Locale.ShortFormat)
                                    color: Style.textMuted
                                    font.pixelSize: Style.fontSmall
                                    elide: Text.ElideRight
                                    Layout.fillWidth: true
                                }
                            }
                            Label {
                                text: status
                                font.pixelSize: Style.fontSmall
                                color: status === "failed" ? Style.error : status === "done" ? Style.good : Style.accent
                            }
                            ToolButton {
                                objectName: "runOpen_" + runId
                                icon.source: "icons/models.svg"
                                icon.width: 18; icon.height: 18
                                enabled: status === "done"
                                onClicked: App.openModelAs(outputDir, name)
                                ToolTip.visible: hovered
                                ToolTip.text: qsTr("Open the tuned model to try it in Chat, Playground and Inspect")
                            }
                            ToolButton {
                                objectName: "runEvaluate_" + runId
                                icon.source: "icons/sparkle.svg"
                                icon.width: 18; icon.height: 18
                                enabled: status === "done"
                                onClicked: page.evaluateRequested(runId)
                                ToolTip.visible: hovered
                                ToolTip.text: qsTr("Evaluate: compare the tuned model with its base (Train page)")
                            }
                            ToolButton {
                                objectName: "runDelete_" + runId
                                icon.source: "icons/trash.svg"
                                icon.width: 18; icon.height: 18
                                enabled: ["queued", "running", "paused"].indexOf(status) < 0
                                onClicked: { page.pendingDelete = runs.get(runId); deleteDialog.open() }
                                ToolTip.visible: hovered
                                ToolTip.text: qsTr("Delete the run, its metrics and its folder")
                            }
                        }
                    }
                }
                Label {
                    visible: page.actionMessage.length > 0
                    text: page.actionMessage
                    color: Style.error
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                TextEdit {
                    visible: list.currentIndex >= 0 && runs.count > 0
                    text: { runs.dataVersion; const r = runs.get(runs.idAt(list.currentIndex)); return r.command ? r.command + (r.error ? "\n\n" + r.error : "") : "" }
                    readOnly: true
                    selectByMouse: true
                    wrapMode: TextEdit.WrapAnywhere
                    font.family: Style.monoFont
                    font.pixelSize: Style.fontSmall
                    color: Style.textMuted
                    Layout.fillWidth: true
                }
            }

            Card {
                title: qsTr("Loss, overlaid")
                subtitle: qsTr("EMA-smoothed training loss of the ticked runs")
                padding: 14
                Layout.fillWidth: true
                Layout.fillHeight: true

                ChartView {
                    id: overlay
                    objectName: "overlayChart"
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    antialiasing: true
                    backgroundColor: "transparent"
                    legend.alignment: Qt.AlignTop
                    plotAreaColor: "transparent"
                    legend.labelColor: Style.chartLabel
                    // Style's chart colours, as in MetricChart: Qt Charts' theme is light-only here.
                    ValueAxis {
                        id: ox; min: 0; max: 1; labelFormat: "%d"; titleText: qsTr("step")
                        tickType: ValueAxis.TicksDynamic; tickAnchor: 0; tickInterval: 1
                        labelsColor: Style.chartLabel; titleBrush: Style.chartTitle; color: Style.chartAxisLine
                        gridLineColor: Style.chartGrid; minorGridLineColor: Style.chartMinorGrid; shadesVisible: false
                    }
                    ValueAxis {
                        id: oy; min: 0; max: 1; labelFormat: "%.1f"
                        tickType: ValueAxis.TicksDynamic; tickAnchor: 0; tickInterval: 0.25
                        labelsColor: Style.chartLabel; titleBrush: Style.chartTitle; color: Style.chartAxisLine
                        gridLineColor: Style.chartGrid; minorGridLineColor: Style.chartMinorGrid; shadesVisible: false
                    }
                }
            }
        }
    }

    Dialog {
        id: deleteDialog
        objectName: "runDeleteDialog"
        title: qsTr("Delete “%1”?").arg(page.pendingDelete.name || "")
        anchors.centerIn: Overlay.overlay
        modal: true
        standardButtons: Dialog.Cancel | Dialog.Ok
        Label {
            text: qsTr("Its metrics, samples and folder (the trained model and checkpoints) are removed.")
            wrapMode: Text.Wrap
            width: 360
        }
        onAccepted: page.actionMessage = runs.deleteRun(page.pendingDelete.runId)
    }

    // One MetricsModel per ticked run; the chart is redrawn from them.
    Instantiator {
        id: selectedMetrics
        model: runs.selectedIds
        delegate: MetricsModel {
            required property var modelData
            jobs: App.training
            runId: modelData
            onCountChanged: redraw.restart()
        }
        onObjectAdded: redraw.restart()
        onObjectRemoved: redraw.restart()
    }
    Timer {
        id: redraw
        interval: 100
        onTriggered: {
            overlay.removeAllSeries()
            let maxX = 1, lo = Infinity, hi = -Infinity
            for (let i = 0; i < selectedMetrics.count; ++i) {
                const m = selectedMetrics.objectAt(i)
                const r = runs.get(m.runId)
                const s = overlay.createSeries(ChartView.SeriesTypeLine, r.name || ("#" + m.runId), ox, oy)
                s.color = page.runColors[i % page.runColors.length]
                s.width = 2
                if (m.fillSeries(s, "smoothed") === 0) continue
                const range = m.range("smoothed")
                lo = Math.min(lo, range.min); hi = Math.max(hi, range.max)
                maxX = Math.max(maxX, m.lastStep, m.totalSteps)
            }
            Style.setAxisTicks(ox, ox.min, maxX, Math.max(1, Style.niceStep(maxX, 5)))
            // Round ticks; losses are never negative, so no axis below zero.
            if (isFinite(lo)) {
                const pad = (hi - lo) * 0.08 || 0.5
                const step = Style.niceStep(hi - lo + 2 * pad, 5)
                oy.labelFormat = Style.tickFormat(step)
                Style.setAxisTicks(oy, Math.floor(Math.max(0, lo - pad) / step) * step,
                                   Math.ceil((hi + pad) / step) * step, step)
            }
        }
    }
}
