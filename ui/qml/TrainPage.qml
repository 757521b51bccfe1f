// TrainPage: start a training run and watch it live. The form is the short path through the wizard
// (model → data → method → hyper-parameters → review the equivalent CLI command → start); the
// dashboard shows the selected run: loss (train, EMA-smoothed, validation) with a smoothing slider
// and a log scale, learning rate, gradient norm with outliers marked, tokens/s, elapsed and ETA,
// the sample generations; pause / resume / cancel; the charts export as PNG, the metrics as CSV. An alignment
// run (reward, dpo, grpo, ppo) adds its own dashboard above the common charts (AlignmentDashboard: health
// warnings, a chart per key metric with its healthy range, the sampled completions).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page
    objectName: "page_train"
    signal goToPlaygroundRequested()

    readonly property TrainingJobs jobs: App.training
    property string exportMessage
    // The new-run form: open at first when there is no run yet, else on demand ("New run"). Set once, not
    // bound to the run count: the wizard must stay open when its own run starts (its Run, Evaluate and
    // Save steps follow).
    property bool showSetup: false
    property bool guided: true

    RunListModel { id: runs; jobs: page.jobs }
    readonly property RunListModel runList: runs
    MetricsModel { id: metrics; jobs: page.jobs; smoothing: smoothingSlider.value }

    // The run shown: the active one while something trains, else the one picked in the list.
    property var shownRunId: 0
    Connections {
        target: page.jobs
        function onActiveRunChanged() { if (page.jobs.activeRunId !== 0) page.shownRunId = page.jobs.activeRunId }
    }
    onShownRunIdChanged: metrics.runId = shownRunId
    Component.onCompleted: {
        if (runs.count > 0) shownRunId = runs.idAt(0)
        showSetup = runs.count === 0
    }
    // A finished run picked elsewhere (the run bar, the Runs page): the wizard opens at its Evaluate step.
    function reviewRun(runId) {
        const run = runs.get(runId)
        if (run.runId === undefined) return
        shownRunId = runId
        guided = true
        showSetup = true
        trainWizard.review(run)
    }
    function openTunedModel(runId) {
        const run = runs.get(runId)
        if (run.status === "done") App.openModelAs(run.outputDir, run.name)
    }
    // Each wizard step starts at its top: a long step scrolled down would leave the next one off-screen.
    Connections {
        target: trainWizard
        function onStepChanged() { scroll.contentItem.contentY = 0 }
    }
    // Re-read whenever the store's runs change (status, new runs).
    readonly property var shownRun: { runs.count; runs.dataVersion; return runs.get(shownRunId) }
    readonly property int shownRow: { runs.count; runs.dataVersion; return runs.rowOf(shownRunId) }
    readonly property string shownStatus: shownRun.status || ""

    function duration(s) {
        if (!isFinite(s) || s <= 0) return "—"
        s = Math.round(s)
        const h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), sec = s % 60
        return h > 0 ? qsTr("%1 h %2 min").arg(h).arg(m) : m > 0 ? qsTr("%1 min %2 s").arg(m).arg(sec) : qsTr("%1 s").arg(sec)
    }
    function num(v, digits) { return isFinite(v) && v !== 0 ? Number(v).toPrecision(digits || 4) : "—" }

    ScrollView {
        id: scroll
        anchors.fill: parent
        contentWidth: availableWidth
        clip: true

        ColumnLayout {
            width: scroll.availableWidth
            spacing: Style.gapLarge + 4

            PageHeader {
                title: qsTr("Train")
                subtitle: qsTr("Pretrain or fine-tune (full or LoRA) on your own text or chats, and watch the run live.")
                Layout.fillWidth: true
                Layout.topMargin: Style.pagePadding
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
            }

            // A new run: the guided wizard (default), or the one-form short path for those who know.
            TabBar {
                objectName: "newRunMode"
                visible: page.showSetup
                currentIndex: page.guided ? 0 : 1
                onCurrentIndexChanged: page.guided = currentIndex === 0
                background: Item {}
                Layout.leftMargin: Style.pagePadding
                TabButton { text: qsTr("Guided wizard"); width: implicitWidth }
                TabButton { text: qsTr("Quick form"); width: implicitWidth }
            }

            TrainWizard {
                id: trainWizard
                visible: page.showSetup && page.guided
                runs: page.runList
                runProgress: metrics.runId === runId && metrics.totalSteps > 0 ? metrics.lastStep / metrics.totalSteps : 0
                runProgressText: metrics.runId === runId && metrics.totalSteps > 0
                                 ? qsTr("Step %1 of %2 · loss %3").arg(metrics.lastStep).arg(metrics.totalSteps).arg(page.num(metrics.lastLoss))
                                 : ""
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                onStartRequested: function(name, settings) {
                    const id = page.jobs.enqueue(name, settings, "")
                    if (id !== 0) {
                        page.shownRunId = id
                        trainWizard.startedRun(id)
                    }
                }
                onCancelled: page.showSetup = false
            }

            TrainSetup {
                id: setup
                objectName: "trainSetup"
                visible: page.showSetup && !page.guided
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                onStartRequested: function(name, settings) {
                    const id = page.jobs.enqueue(name, settings, "")
                    if (id !== 0) {
                        page.shownRunId = id
                        page.showSetup = false
                    }
                }
            }

            // The run bar: which run, its state, and what can be done with it.
            Card {
                objectName: "runBar"
                padding: 14
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding

                RowLayout {
                    spacing: Style.gap
                    Layout.fillWidth: true
                    Label { text: qsTr("Run"); color: Style.textMuted }
                    ComboBox {
                        id: runPicker
                        objectName: "runPicker"
                        model: runs
                        textRole: "name"
                        valueRole: "runId"
                        Layout.preferredWidth: 220
                        Layout.minimumWidth: 140
                        currentIndex: page.shownRow
                        displayText: runs.count === 0 ? qsTr("No runs yet") : currentText
                        onActivated: page.shownRunId = currentValue
                    }
                    Rectangle {
                        visible: page.shownStatus.length > 0
                        radius: height / 2
                        color: page.shownStatus === "failed" ? Style.errorSoft : Style.accentSoft
                        implicitWidth: statusLabel.implicitWidth + 20
                        implicitHeight: statusLabel.implicitHeight + 8
                        Label {
                            id: statusLabel
                            objectName: "runStatus"
                            anchors.centerIn: parent
                            text: page.shownStatus
                            font.pixelSize: Style.fontSmall
                            color: page.shownStatus === "failed" ? Style.error : Style.accent
                        }
                    }
                    Item { Layout.fillWidth: true }
                    Button {
                        objectName: "openTunedButton"
                        text: qsTr("Open tuned model")
                        icon.source: "icons/models.svg"
                        flat: true
                        visible: page.shownStatus === "done"
                        onClicked: page.openTunedModel(page.shownRunId)
                        ToolTip.visible: hovered
                        ToolTip.text: qsTr("Load the trained model as “%1” to try it in Chat, Playground and Inspect").arg(page.shownRun.name || "")
                    }
                    Button {
                        objectName: "reviewRunButton"
                        text: qsTr("Evaluate / save…")
                        flat: true
                        visible: page.shownStatus === "done" && !(page.showSetup && page.guided && trainWizard.runId === page.shownRunId)
                        onClicked: page.reviewRun(page.shownRunId)
                        ToolTip.visible: hovered
                        ToolTip.text: qsTr("Compare the tuned model with its base, and export it")
                    }
                    Button {
                        objectName: "newRunButton"
                        text: page.showSetup ? qsTr("Hide new run") : qsTr("New run…")
                        icon.source: "icons/train.svg"
                        flat: true
                        onClicked: {
                            // A wizard whose run has ended starts over; one whose run still trains keeps following it.
                            if (!page.showSetup && ["done", "failed", "cancelled"].indexOf(trainWizard.runStatus) >= 0)
                                trainWizard.restart()
                            page.showSetup = !page.showSetup
                        }
                    }
                    Button {
                        objectName: "pauseButton"
                        text: qsTr("Pause")
                        flat: true
                        visible: page.shownStatus === "running" || page.shownStatus === "queued"
                        onClicked: page.jobs.pause(page.shownRunId)
                        ToolTip.visible: hovered
                        ToolTip.text: qsTr("Stop after this step with a checkpoint; resume continues the same curve")
                    }
                    Button {
                        objectName: "resumeButton"
                        text: qsTr("Resume")
                        highlighted: true
                        visible: page.shownStatus === "paused"
                        onClicked: page.jobs.resume(page.shownRunId)
                    }
                    Button {
                        objectName: "cancelButton"
                        text: qsTr("Cancel")
                        flat: true
                        visible: ["running", "queued", "paused"].indexOf(page.shownStatus) >= 0
                        onClicked: page.jobs.cancel(page.shownRunId)
                    }
                    // The exports share one button: the bar must keep its run actions in view at 1200 px.
                    Button {
                        objectName: "exportButton"
                        text: qsTr("Export")
                        icon.source: "icons/download.svg"
                        flat: true
                        enabled: metrics.count > 0
                        onClicked: exportMenu.open()
                        Menu {
                            id: exportMenu
                            y: parent.height
                            MenuItem {
                                text: qsTr("Metrics as CSV")
                                onTriggered: {
                                    const path = page.shownRun.outputDir + "/metrics.csv"
                                    const err = metrics.exportCsv(path)
                                    page.exportMessage = err.length > 0 ? err : qsTr("Metrics written to %1").arg(path)
                                }
                            }
                            MenuItem {
                                text: qsTr("Loss chart as PNG")
                                onTriggered: {
                                    const path = page.shownRun.outputDir + "/loss.png"
                                    lossChart.grabToImage(function(result) {
                                        page.exportMessage = result.saveToFile(path) ? qsTr("Chart written to %1").arg(path)
                                                                                     : qsTr("Could not write %1").arg(path)
                                    })
                                }
                            }
                        }
                    }
                }
                Label {
                    visible: text.length > 0
                    text: page.shownRun.error || ""
                    color: Style.error
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                Label {
                    visible: page.exportMessage.length > 0
                    text: page.exportMessage
                    color: Style.textMuted
                    font.pixelSize: Style.fontSmall
                    Layout.fillWidth: true
                    elide: Text.ElideMiddle
                }
            }

            // Figures at a glance.
            GridLayout {
                id: statTiles
                objectName: "statTiles"
                columns: page.width > 1100 ? 7 : 4
                columnSpacing: Style.gap
                rowSpacing: Style.gap
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                // The figures change every step; the tiles stay. A Repeater over this array itself would destroy
                // and re-create all seven tiles at each change (a new array is a new model), so it repeats a
                // fixed count and each tile reads its entry.
                readonly property var tiles: [
                    { label: qsTr("Step"), value: metrics.totalSteps > 0 ? metrics.lastStep + " / " + metrics.totalSteps : "—" },
                    { label: qsTr("Loss"), value: page.num(metrics.lastLoss) },
                    { label: qsTr("Val loss"), value: page.num(metrics.lastValLoss) },
                    { label: qsTr("Tokens/s"), value: metrics.tokensPerS > 0 ? Math.round(metrics.tokensPerS).toString() : "—" },
                    { label: qsTr("Elapsed"), value: page.duration(metrics.elapsedS) },
                    { label: qsTr("ETA"), value: page.shownStatus === "running" ? page.duration(metrics.etaS) : "—" },
                    { label: qsTr("Memory"), value: page.shownStatus === "running" ? Style.bytes(App.training.residentMemory) : "—" }
                ]
                Repeater {
                    model: 7
                    delegate: Rectangle {
                        required property int index
                        readonly property var modelData: statTiles.tiles[index]
                        color: Style.surface
                        border.color: Style.border
                        radius: Style.radius
                        Layout.fillWidth: true
                        implicitHeight: 64
                        Column {
                            anchors.left: parent.left
                            anchors.verticalCenter: parent.verticalCenter
                            anchors.leftMargin: 14
                            spacing: 2
                            Label { text: modelData.label; color: Style.textMuted; font.pixelSize: Style.fontSmall }
                            Label { text: modelData.value; color: Style.text; font.pixelSize: 20; font.weight: Font.DemiBold }
                        }
                    }
                }
            }

            ProgressBar {
                visible: page.shownStatus === "running"
                from: 0
                to: Math.max(1, metrics.totalSteps)
                value: metrics.lastStep
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
            }

            AlignmentDashboard {
                objectName: "alignmentDashboard"
                visible: metrics.alignment
                metrics: metrics
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
            }

            GridLayout {
                columns: page.width > 1000 ? 2 : 1
                columnSpacing: Style.gapLarge
                rowSpacing: Style.gapLarge
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding

                MetricChart {
                    id: lossChart
                    objectName: "lossChart"
                    title: qsTr("Loss")
                    metrics: metrics
                    logScale: logToggle.checked
                    Layout.preferredHeight: 320
                    specs: [
                        { key: "loss", name: qsTr("train"), color: Style.dark ? "#4a5170" : "#c5cae9", width: 1 },
                        { key: "smoothed", name: qsTr("train (smoothed)"), color: Style.accent, width: 2.5 },
                        { key: "val", name: qsTr("validation"), color: Style.warn, kind: "scatter", width: 9 }
                    ]
                    tools: [
                        Label { text: qsTr("Smoothing"); color: Style.textMuted; font.pixelSize: Style.fontSmall },
                        Slider {
                            id: smoothingSlider
                            objectName: "smoothingSlider"
                            from: 0; to: 0.99; value: 0.6
                            Layout.preferredWidth: 140
                            ToolTip.visible: hovered
                            ToolTip.text: qsTr("Exponential moving average weight (0 = raw values)")
                        },
                        Label { text: smoothingSlider.value.toFixed(2); color: Style.textMuted; font.pixelSize: Style.fontSmall },
                        Item { Layout.fillWidth: true },
                        Switch { id: logToggle; objectName: "logToggle"; text: qsTr("Log scale") }
                    ]
                }
                MetricChart {
                    title: qsTr("Learning rate")
                    metrics: metrics
                    Layout.preferredHeight: 320
                    specs: [{ key: "lr", name: qsTr("learning rate"), color: Style.good }]
                }
                MetricChart {
                    objectName: "gradNormChart"
                    title: qsTr("Gradient norm")
                    subtitle: metrics.outlierCount > 0
                              ? qsTr("%n step(s) above 3× the median of the 25 before (marked)", "", metrics.outlierCount)
                              : qsTr("Before clipping; spikes above 3× the recent median are marked")
                    metrics: metrics
                    specs: [
                        { key: "gradNorm", name: qsTr("gradient norm"), color: Style.accent },
                        { key: "outliers", name: qsTr("outlier"), color: Style.error, kind: "scatter", width: 10 }
                    ]
                }
                MetricChart {
                    title: qsTr("Throughput")
                    subtitle: qsTr("Tokens per second (forward and backward)")
                    metrics: metrics
                    specs: [{ key: "tokensPerS", name: qsTr("tokens/s"), color: Style.good }]
                }
            }

            Card {
                id: samplesCard
                objectName: "samplesCard"
                // Alignment runs show their sampled completions in their own dashboard.
                visible: !metrics.alignment || metrics.samples.length > 0
                title: qsTr("Sample generations")
                subtitle: metrics.samples.length > 0 ? qsTr("Greedy continuations of the sample prompt during training")
                                                     : qsTr("Set “Sample every” in the run's settings to see what the model writes as it learns.")
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                // Newest first, at most eight. As with the tiles, the Repeater counts and each row reads its
                // entry, so a new sample re-creates nothing once eight are shown.
                readonly property var shownSamples: metrics.samples.slice(-8).reverse()
                Repeater {
                    model: samplesCard.shownSamples.length
                    delegate: RowLayout {
                        required property int index
                        readonly property var modelData: samplesCard.shownSamples[index] || ({ step: 0, prompt: "", text: "" })
                        spacing: Style.gapLarge
                        Layout.fillWidth: true
                        Label {
                            text: qsTr("step %1").arg(modelData.step)
                            color: Style.textMuted
                            font.pixelSize: Style.fontSmall
                            Layout.preferredWidth: 70
                            Layout.alignment: Qt.AlignTop
                        }
                        Label {
                            text: "<b>" + modelData.prompt.replace(/&/g, "&amp;").replace(/</g, "&lt;") + "</b>"
                                  + modelData.text.replace(/&/g, "&amp;").replace(/</g, "&lt;")
                            textFormat: Text.StyledText
                            color: Style.text
                            font.family: Style.monoFont
                            wrapMode: Text.Wrap
                            Layout.fillWidth: true
                        }
                    }
                }
            }

            // Pairs collected in Chat with Compare: the data a reward model or DPO trains on.
            PreferencePairsCard {
                onTrainRequested: function(path) {
                    page.guided = true
                    page.showSetup = true
                    trainWizard.useDataFile(path)
                }
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                Layout.bottomMargin: Style.pagePadding
            }
        }
    }
}
