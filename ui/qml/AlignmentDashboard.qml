// AlignmentDashboard: the Train page's view of an alignment run (reward model, DPO, GRPO, PPO). On top, one line
// per warning of the run's health check (MetricsModel.healthWarnings, alignment_health::check); then a chart for
// each key metric the run reports (reward, KL, entropy, clip fraction, value loss, ratio, response length, pair
// accuracy and margin), with its healthy range shaded; then the completions the run sampled with their rewards,
// newest first. A chart appears only when the run reports its metric, so each recipe shows its own set.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

ColumnLayout {
    id: dash

    property MetricsModel metrics
    spacing: Style.gapLarge

    // Every chart the dashboard knows. show: the metric whose presence shows the chart (unless `hide` is present
    // too); band: the metric whose healthy range is shaded; series: the curves, each drawn when the run has it.
    readonly property var charts: [
        { name: "reward", title: qsTr("Reward"), show: "objective/scores", band: "",
          subtitle: qsTr("Score of the sampled completions; less the KL penalty, what PPO maximises"),
          series: [{ key: "objective/scores", name: qsTr("score"), color: Style.accent },
                   { key: "objective/rlhf_reward", name: qsTr("score − KL penalty"), color: Style.warn }] },
        { name: "reward", title: qsTr("Reward"), show: "reward", band: "",
          subtitle: qsTr("Mean reward of the sampled completions"),
          series: [{ key: "reward", name: qsTr("reward"), color: Style.accent }] },
        { name: "kl", title: qsTr("KL to the reference"), show: "objective/kl", band: "objective/kl",
          subtitle: qsTr("Nats per completion"),
          series: [{ key: "objective/kl", name: qsTr("KL"), color: Style.accent }] },
        { name: "kl", title: qsTr("KL to the reference"), show: "kl", band: "kl",
          subtitle: qsTr("Nats per token"),
          series: [{ key: "kl", name: qsTr("KL"), color: Style.accent }] },
        { name: "entropy", title: qsTr("Entropy"), show: "objective/entropy", band: "objective/entropy",
          subtitle: qsTr("Nats per completion"),
          series: [{ key: "objective/entropy", name: qsTr("entropy"), color: Style.accent }] },
        { name: "tokenEntropy", title: qsTr("Entropy per token"), show: "policy/entropy_avg", band: "policy/entropy_avg",
          subtitle: qsTr("Of the policy's next-token distribution"),
          series: [{ key: "policy/entropy_avg", name: qsTr("entropy"), color: Style.accent }] },
        { name: "clip", title: qsTr("Clip fraction"), show: "policy/clipfrac_avg", band: "policy/clipfrac_avg",
          subtitle: qsTr("Share of tokens whose ratio was clipped"),
          series: [{ key: "policy/clipfrac_avg", name: qsTr("clipped"), color: Style.accent }] },
        { name: "clip", title: qsTr("Clip fraction"), show: "clip_ratio", band: "clip_ratio",
          subtitle: qsTr("Share of tokens whose ratio was clipped"),
          series: [{ key: "clip_ratio", name: qsTr("clipped"), color: Style.accent }] },
        { name: "valueLoss", title: qsTr("Value loss"), show: "loss/value_avg", band: "loss/value_avg",
          subtitle: qsTr("The value head's error on the returns"),
          series: [{ key: "loss/value_avg", name: qsTr("value loss"), color: Style.accent }] },
        { name: "ratio", title: qsTr("Policy ratio"), show: "val/ratio", band: "val/ratio",
          subtitle: qsTr("New over old probability of the sampled tokens, mean"),
          series: [{ key: "val/ratio", name: qsTr("ratio"), color: Style.accent }] },
        { name: "length", title: qsTr("Response length"), show: "completion_length", band: "",
          subtitle: qsTr("Tokens per sampled completion, mean"),
          series: [{ key: "completion_length", name: qsTr("tokens"), color: Style.accent }] },
        { name: "accuracy", title: qsTr("Pair accuracy"), show: "rewards/accuracies", band: "rewards/accuracies",
          subtitle: qsTr("Share of pairs whose chosen answer gets the higher implicit reward"),
          series: [{ key: "rewards/accuracies", name: qsTr("train"), color: Style.accent },
                   { key: "val_rewards/accuracies", name: qsTr("held out"), color: Style.warn, kind: "scatter", width: 9 }] },
        { name: "margin", title: qsTr("Reward margin"), show: "rewards/margins", band: "rewards/margins",
          subtitle: qsTr("Implicit reward of chosen minus rejected"),
          series: [{ key: "rewards/margins", name: qsTr("train"), color: Style.accent },
                   { key: "val_rewards/margins", name: qsTr("held out"), color: Style.warn, kind: "scatter", width: 9 }] },
        { name: "implicitRewards", title: qsTr("Implicit rewards"), show: "rewards/chosen", band: "",
          subtitle: qsTr("β × log-ratio to the reference, chosen and rejected"),
          series: [{ key: "rewards/chosen", name: qsTr("chosen"), color: Style.good },
                   { key: "rewards/rejected", name: qsTr("rejected"), color: Style.error }] },
        { name: "accuracy", title: qsTr("Pair accuracy"), show: "accuracy", band: "",
          subtitle: qsTr("Share of pairs the reward model ranks right"),
          series: [{ key: "accuracy", name: qsTr("train"), color: Style.accent },
                   { key: "val_accuracy", name: qsTr("held out"), color: Style.warn, kind: "scatter", width: 9 }] },
        { name: "margin", title: qsTr("Score margin"), show: "margin", band: "",
          subtitle: qsTr("Score of chosen minus rejected"),
          series: [{ key: "margin", name: qsTr("train"), color: Style.accent },
                   { key: "val_margin", name: qsTr("held out"), color: Style.warn, kind: "scatter", width: 9 }] },
        { name: "heldOut", title: qsTr("Held-out accuracy"), show: "val_accuracy", hide: "accuracy", band: "",
          subtitle: qsTr("Greedy answers to held-out prompts, checked"),
          series: [{ key: "val_accuracy", name: qsTr("held out"), color: Style.warn, kind: "scatter", width: 9 }] }
    ]
    // Recomputed only when the set of names changes (a string compares by value, so a step that adds no
    // name does not rebuild the charts).
    readonly property string namesKey: metrics ? metrics.metricNames.join("\n") : ""
    readonly property var shownCharts: {
        const names = namesKey.split("\n")
        const has = function(k) { return names.indexOf(k) >= 0 }
        const out = []
        for (const c of charts) {
            if (!has(c.show) || (c.hide && has(c.hide))) continue
            out.push(Object.assign({}, c, { series: c.series.filter(s => has(s.key)) }))
        }
        return out
    }

    // The completions as one JS array per change (reading the C++ list converts all of it), and the
    // table's cell `index` of it: four per completion (step, prompt, completion, score).
    readonly property var completionRows: metrics ? metrics.completions : []
    function completionCell(index) {
        const r = completionRows[Math.floor(index / 4)]
        const kind = ["step", "prompt", "completion", "score"][index % 4]
        if (!r) return { kind: kind, text: "" }
        const text = kind === "step" ? String(r.step) : kind === "prompt" ? r.prompt : kind === "completion" ? r.completion
                     : isFinite(r.score) ? Number(r.score).toPrecision(3) : "—"
        return { kind: kind, text: text }
    }

    function bandText(band) {
        if (!band || band.low === undefined) return ""
        const f = v => Number(v).toPrecision(3).replace(/\.?0+$/, "")
        if (isFinite(band.low) && isFinite(band.high)) return qsTr("healthy %1 – %2").arg(f(band.low)).arg(f(band.high))
        if (isFinite(band.high)) return qsTr("healthy below %1").arg(f(band.high))
        if (isFinite(band.low)) return qsTr("healthy above %1").arg(f(band.low))
        return ""
    }

    // The health check: a line per warning, or one quiet line that all is well.
    ColumnLayout {
        objectName: "healthWarnings"
        spacing: Style.gap
        Layout.fillWidth: true
        Repeater {
            model: dash.metrics ? dash.metrics.healthWarnings : []
            delegate: Rectangle {
                required property var modelData
                objectName: "healthWarning_" + modelData.rule
                color: Style.findSoft
                border.color: Style.findBorder
                radius: Style.radius - 2
                Layout.fillWidth: true
                implicitHeight: warningRow.implicitHeight + 20
                RowLayout {
                    id: warningRow
                    anchors.fill: parent
                    anchors.leftMargin: 14
                    anchors.rightMargin: 14
                    anchors.topMargin: 10
                    anchors.bottomMargin: 10
                    spacing: Style.gap + 2
                    Icon { iconName: "error"; color: Style.warn; Layout.alignment: Qt.AlignTop }
                    TextEdit {
                        objectName: "healthWarningText"
                        text: modelData.message
                        readOnly: true
                        selectByMouse: true
                        wrapMode: Text.Wrap
                        color: Style.text
                        selectionColor: Style.accent
                        font.pixelSize: Style.fontBody
                        Layout.fillWidth: true
                    }
                }
            }
        }
        Label {
            objectName: "healthAllClear"
            visible: dash.metrics && dash.metrics.healthWarnings.length === 0 && dash.metrics.count > 0
            text: qsTr("Health check: every watched metric is in its healthy range.")
            color: Style.good
            font.pixelSize: Style.fontSmall
            Layout.fillWidth: true
        }
    }

    GridLayout {
        objectName: "alignmentCharts"
        columns: dash.width > 960 ? 2 : 1
        columnSpacing: Style.gapLarge
        rowSpacing: Style.gapLarge
        Layout.fillWidth: true
        Repeater {
            model: dash.shownCharts
            delegate: MetricChart {
                required property var modelData
                objectName: "alignmentChart_" + modelData.name
                title: modelData.title
                subtitle: [modelData.subtitle, dash.bandText(band)].filter(t => t.length > 0).join(" · ")
                metrics: dash.metrics
                specs: modelData.series
                band: { dash.metrics.count; return modelData.band.length > 0 ? dash.metrics.healthyBand(modelData.band) : null }
                // Room for a legend above the plot (charts with two curves) without squashing it.
                Layout.preferredHeight: 300
                // The same preferred width for all: the two columns share the row equally, whatever their
                // subtitles' lengths.
                Layout.preferredWidth: 400
            }
        }
    }

    Card {
        objectName: "completionsCard"
        title: qsTr("Sampled completions")
        subtitle: dash.metrics && dash.metrics.completions.length > 0
                  ? qsTr("What the policy wrote during training, and the reward each got; newest first")
                  : qsTr("No completions yet: they appear with the run's first steps.")
        visible: dash.metrics && (dash.metrics.completions.length > 0 || dash.metrics.recipe === "ppo")
        Layout.fillWidth: true

        GridLayout {
            objectName: "completionsTable"
            visible: dash.metrics && dash.metrics.completions.length > 0
            columns: 4
            columnSpacing: Style.gapLarge
            rowSpacing: Style.gap
            Layout.fillWidth: true

            Label { text: qsTr("Step"); color: Style.textMuted; font.pixelSize: Style.fontSmall; font.weight: Font.DemiBold }
            Label { text: qsTr("Prompt"); color: Style.textMuted; font.pixelSize: Style.fontSmall; font.weight: Font.DemiBold }
            Label { text: qsTr("Completion"); color: Style.textMuted; font.pixelSize: Style.fontSmall; font.weight: Font.DemiBold }
            Label {
                text: qsTr("Reward")
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
                font.weight: Font.DemiBold
                Layout.alignment: Qt.AlignRight
            }

            Repeater {
                // Four cells per completion, in the grid's row order. A count, each cell reading its own
                // text: every step of an online run brings new completions, and a model made of a fresh
                // array would re-create all the cells (and re-lay out the grid) each time; this way the
                // cells stay and only their texts change.
                model: Math.min(dash.completionRows.length, 12) * 4
                delegate: Label {
                    required property int index
                    readonly property var modelData: dash.completionCell(index)
                    objectName: "completionCell_" + modelData.kind
                    text: modelData.text
                    textFormat: Text.PlainText
                    color: modelData.kind === "step" ? Style.textMuted : Style.text
                    font.family: modelData.kind === "completion" || modelData.kind === "prompt" ? Style.monoFont : Qt.application.font.family
                    font.pixelSize: modelData.kind === "step" ? Style.fontSmall : Style.fontBody
                    wrapMode: Text.Wrap
                    maximumLineCount: 4
                    elide: Text.ElideRight
                    horizontalAlignment: modelData.kind === "score" ? Text.AlignRight : Text.AlignLeft
                    Layout.alignment: Qt.AlignTop
                    Layout.fillWidth: modelData.kind === "completion" || modelData.kind === "prompt"
                    Layout.preferredWidth: modelData.kind === "completion" ? 300 : modelData.kind === "prompt" ? 200 : -1
                    Layout.minimumWidth: modelData.kind === "score" ? 56 : 0
                }
            }
        }
    }
}
