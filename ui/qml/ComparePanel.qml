// ComparePanel: Chat's open comparison: the chat's last reply (A) beside a second reply to the same
// message written with another seed (B), each readable in full and editable, and the pick between
// them. The reply kept becomes the chat's reply; the pair is saved for reward-model and DPO training
// (listed on the Train page). Dismissing leaves the chat as it was. With a reward model chosen, both
// replies are scored and the one it prefers is marked.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    id: panel
    objectName: "comparePanel"

    // The side being edited before it is kept: "A", "B" or "".
    property string editing: ""
    readonly property bool writing: App.chat.compareWriting
    readonly property bool canPick: !writing && App.chat.compareOriginal.length > 0
                                    && App.chat.compareAlternative.length > 0
    // The reward model's scores of A and B, and which it prefers ("" until both are scored).
    readonly property var scoreA: App.chat.compareOriginalScore
    readonly property var scoreB: App.chat.compareAlternativeScore
    readonly property bool bothScored: (scoreA.text ?? "").length > 0 && (scoreB.text ?? "").length > 0
    readonly property string preferred: !bothScored || scoreA.score === scoreB.score ? ""
                                        : scoreA.score > scoreB.score ? "A" : "B"

    // Keeps `side` (with its edits when it is the one being edited).
    function keep(side) {
        if (!canPick) return
        const text = editing === side ? (side === "A" ? paneA.editedText : paneB.editedText) : ""
        if (App.chat.keepComparison(side, text)) editing = ""
    }

    color: Style.surface
    border.color: Style.border
    radius: Style.radius
    implicitHeight: column.implicitHeight + 32

    Connections {
        target: App.chat
        function onComparisonChanged() { if (!App.chat.comparing) panel.editing = "" }
    }

    component ComparePane: ColumnLayout {
        id: pane
        required property string side
        required property string title
        required property string text
        required property string statsText
        required property var score
        property bool writingNow: false
        readonly property bool editingNow: panel.editing === side
        readonly property string editedText: area.text

        onEditingNowChanged: if (!editingNow) area.text = Qt.binding(() => pane.text)
        spacing: Style.gapSmall
        Layout.fillWidth: true
        Layout.fillHeight: true
        Layout.preferredWidth: 1  // the two panes share the width equally

        RowLayout {
            spacing: Style.gap
            Layout.fillWidth: true
            Rectangle {
                implicitWidth: 22
                implicitHeight: 22
                radius: 11
                color: Style.accentSoft
                Label {
                    anchors.centerIn: parent
                    text: pane.side
                    font.pixelSize: Style.fontSmall
                    font.weight: Font.DemiBold
                    color: Style.accent
                }
            }
            Label {
                text: pane.title
                font.weight: Font.DemiBold
                color: Style.text
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            RewardBadge {
                objectName: "compareScore" + pane.side
                score: pane.score
                modelName: App.chat.rewardModelName
                best: panel.preferred === pane.side
            }
            Label {
                visible: pane.writingNow
                text: qsTr("writing…")
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
            }
            Label {
                visible: pane.editingNow
                text: qsTr("editing")
                color: Style.accent
                font.pixelSize: Style.fontSmall
            }
        }
        Rectangle {
            color: Style.surfaceAlt
            border.color: pane.editingNow ? Style.accent : Style.border
            radius: Style.radius - 2
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.minimumHeight: 72
            Layout.preferredHeight: Math.min(area.implicitHeight + 4, 320)
            ScrollView {
                id: scroll
                anchors.fill: parent
                anchors.margins: 2
                clip: true
                TextArea {
                    id: area
                    objectName: "compareText" + pane.side
                    text: pane.text
                    readOnly: !pane.editingNow
                    wrapMode: TextArea.Wrap
                    selectByMouse: true
                    background: null
                    // Material's TextArea pads for an underline we do not draw; the box needs even insets.
                    leftPadding: 10
                    rightPadding: 10
                    topPadding: 8
                    bottomPadding: 8
                    color: Style.text
                    selectionColor: Style.accent
                    font.pixelSize: Style.fontBody
                    placeholderText: pane.writingNow ? "●  ●  ●" : ""
                    Keys.onEscapePressed: panel.editing = ""
                }
            }
        }
        Label {
            text: pane.statsText
            visible: text.length > 0
            color: Style.textFaint
            font.pixelSize: Style.fontSmall
            elide: Text.ElideRight
            Layout.fillWidth: true
        }
        RowLayout {
            spacing: Style.gap
            Layout.fillWidth: true
            Button {
                objectName: "compareEdit" + pane.side
                text: pane.editingNow ? qsTr("Undo edits") : qsTr("Edit")
                icon.source: pane.editingNow ? "icons/close.svg" : "icons/edit.svg"
                icon.width: 16
                icon.height: 16
                flat: true
                enabled: !panel.writing && pane.text.length > 0
                onClicked: {
                    if (pane.editingNow) {
                        panel.editing = ""
                    } else {
                        panel.editing = pane.side
                        area.forceActiveFocus()
                    }
                }
                ToolTip.visible: hovered
                ToolTip.delay: 500
                ToolTip.text: pane.editingNow ? qsTr("Back to the reply as the model wrote it")
                                              : qsTr("Improve this reply before keeping it; the edited text is what is kept")
            }
            Item { Layout.fillWidth: true }
            Button {
                id: keepButton
                objectName: "keep" + pane.side
                text: qsTr("%1 is better").arg(pane.side)
                flat: true
                enabled: panel.canPick
                leftPadding: 16
                rightPadding: 16
                // Drawn here rather than by Material's raised style, whose shadow the software renderer
                // drops (as the New chat button).
                Material.foreground: enabled ? (Style.dark ? Style.window : "white") : Style.textFaint
                background: Rectangle {
                    implicitHeight: 36
                    radius: 8
                    color: !keepButton.enabled ? Style.border
                           : keepButton.down ? Qt.darker(Style.accent, 1.15)
                           : keepButton.hovered ? Qt.lighter(Style.accent, 1.08) : Style.accent
                }
                onClicked: panel.keep(pane.side)
                ToolTip.visible: hovered
                ToolTip.delay: 500
                ToolTip.text: qsTr("Keep %1%2 as the chat's reply and save the pair (Ctrl+Shift+%1)")
                                  .arg(pane.side).arg(pane.editingNow ? qsTr(" as edited") : "")
            }
        }
    }

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.margins: 16
        spacing: Style.gap + 4

        RowLayout {
            spacing: Style.gap
            Layout.fillWidth: true
            Icon {
                iconName: "compare"
                color: Style.accent
                sourceSize.width: 20
                sourceSize.height: 20
                Layout.alignment: Qt.AlignTop
            }
            ColumnLayout {
                spacing: 2
                Layout.fillWidth: true
                Label {
                    text: qsTr("Which reply is better?")
                    font.pixelSize: Style.fontSection
                    font.weight: Font.DemiBold
                    color: Style.text
                    Layout.fillWidth: true
                }
                Label {
                    objectName: "compareRewardVerdict"
                    visible: text.length > 0
                    text: panel.bothScored
                          ? (panel.preferred.length > 0
                             ? qsTr("The reward model %1 prefers %2 (%3 against %4).").arg(App.chat.rewardModelName).arg(panel.preferred)
                               .arg(panel.preferred === "A" ? panel.scoreA.text : panel.scoreB.text)
                               .arg(panel.preferred === "A" ? panel.scoreB.text : panel.scoreA.text)
                             : qsTr("The reward model %1 scores both replies the same.").arg(App.chat.rewardModelName))
                          : ""
                    color: Style.good
                    font.pixelSize: Style.fontSmall
                    font.weight: Font.DemiBold
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                Label {
                    objectName: "compareHint"
                    text: panel.writing ? qsTr("B is being written with the same settings and another seed. Stop it (Esc) to compare what it has so far.")
                                        : qsTr("The one you keep becomes the chat's reply, and the pair is saved for reward-model and DPO training (Train page). Ctrl+Shift+A or B picks; Esc dismisses.")
                    color: Style.textMuted
                    font.pixelSize: Style.fontSmall
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
            }
            Button {
                objectName: "stopCompareButton"
                visible: panel.writing
                text: qsTr("Stop")
                icon.source: "icons/stop.svg"
                icon.width: 16
                icon.height: 16
                flat: true
                onClicked: App.chat.stop()
                Layout.alignment: Qt.AlignTop
            }
            Button {
                objectName: "dismissCompareButton"
                text: qsTr("Dismiss")
                icon.source: "icons/close.svg"
                icon.width: 16
                icon.height: 16
                flat: true
                onClicked: App.chat.dismissComparison()
                Layout.alignment: Qt.AlignTop
                ToolTip.visible: hovered
                ToolTip.delay: 500
                ToolTip.text: qsTr("Keep the chat as it is and forget the second reply")
            }
        }

        GridLayout {
            columns: panel.width >= 640 ? 2 : 1
            columnSpacing: Style.gapLarge
            rowSpacing: Style.gapLarge
            Layout.fillWidth: true
            Layout.fillHeight: true
            ComparePane {
                id: paneA
                side: "A"
                title: qsTr("This reply")
                text: App.chat.compareOriginal
                statsText: App.chat.compareOriginalStats
                score: panel.scoreA
            }
            ComparePane {
                id: paneB
                side: "B"
                title: qsTr("Second reply (another seed)")
                text: App.chat.compareAlternative
                statsText: App.chat.compareAlternativeStats
                score: panel.scoreB
                writingNow: panel.writing
            }
        }
    }
}
