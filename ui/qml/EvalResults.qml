// EvalResults: task evaluation results, one row per task -- its accuracy as a number and a bar -- with
// the per-category numbers (add_2d, seen, unseen, stops, ...) in a compact line under it.
// `rows` are ModelEvaluator / model card rows: [{task, n, correct, accuracy, categories: [{name, n,
// correct, accuracy}]}].
// A Column (a positioner), not a ColumnLayout: its rows are recreated whenever the results change, and
// Qt 6.4's layouts can crash polishing a layout whose Repeater delegates were just destroyed.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Column {
    id: results

    property var rows: []

    spacing: Style.gap + 2

    function taskTitle(task) {
        if (task === "arith") return qsTr("Arithmetic")
        if (task === "facts") return qsTr("Facts")
        if (task === "chat") return qsTr("Chat")
        return task
    }
    function percent(accuracy) { return Math.round(accuracy * 1000) / 10 + " %" }

    Repeater {
        model: results.rows
        delegate: ColumnLayout {
            id: taskRow
            required property var modelData
            objectName: "evalRow_" + taskRow.modelData.task
            spacing: 3
            width: results.width

            RowLayout {
                spacing: Style.gap
                Layout.fillWidth: true
                Label {
                    text: results.taskTitle(taskRow.modelData.task)
                    color: Style.text
                    font.pixelSize: Style.fontBody
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
                Label {
                    objectName: "evalAccuracy"
                    text: results.percent(taskRow.modelData.accuracy)
                    color: Style.text
                    font.pixelSize: Style.fontBody
                    font.weight: Font.DemiBold
                }
                Label {
                    text: qsTr("%1 of %2").arg(taskRow.modelData.correct).arg(taskRow.modelData.n)
                    color: Style.textMuted
                    font.pixelSize: Style.fontSmall
                    horizontalAlignment: Text.AlignRight
                    Layout.preferredWidth: 72
                }
            }
            Rectangle {
                color: Style.accentSoft
                radius: 2
                implicitHeight: 4
                Layout.fillWidth: true
                Rectangle {
                    width: parent.width * Math.max(0, Math.min(1, taskRow.modelData.accuracy))
                    height: parent.height
                    radius: 2
                    color: Style.accent
                }
            }
            Label {
                visible: text.length > 0
                text: (taskRow.modelData.categories || []).map(c => c.name + " " + results.percent(c.accuracy)
                                                                + " (" + c.n + ")").join("  ·  ")
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }
    }
}
