// RewardBadge: a reply's reward-model score as a small pill ("★ +0.42"), "scoring…" while it is computed,
// or "not scored" with the reason in its tooltip. `score` is one entry of ChatController's rewardScores
// ({score, text, pending, error, turnsLeftOut}); an empty map hides the badge. `best` marks the preferred
// reply of a comparison.
import QtQuick
import QtQuick.Controls
import Workbench.Ui

Rectangle {
    id: badge

    property var score: ({})
    property string modelName
    property bool best: false
    readonly property bool pending: score.pending === true
    readonly property bool failed: (score.error ?? "").length > 0
    readonly property string label: pending ? qsTr("scoring…") : failed ? qsTr("not scored") : (score.text ?? "")

    visible: label.length > 0
    implicitWidth: row.implicitWidth + 14
    implicitHeight: 22
    radius: 11
    color: failed ? Style.errorSoft : best ? (Style.dark ? "#24382c" : "#e3f2e8") : Style.accentSoft
    border.color: failed ? Style.errorBorder : best ? Style.good : "transparent"

    Row {
        id: row
        anchors.centerIn: parent
        spacing: 4
        Label {
            text: badge.failed ? "!" : "★"
            color: badge.failed ? Style.error : badge.best ? Style.good : Style.accent
            font.pixelSize: Style.fontSmall
            anchors.verticalCenter: parent.verticalCenter
        }
        Label {
            objectName: "rewardBadgeText"
            text: badge.label
            color: badge.failed ? Style.error : Style.text
            font.pixelSize: Style.fontSmall
            font.weight: Font.DemiBold
            anchors.verticalCenter: parent.verticalCenter
        }
    }

    HoverHandler { id: hover }
    ToolTip.visible: hover.hovered
    ToolTip.delay: 300
    ToolTip.text: badge.failed ? badge.score.error
                  : badge.pending ? qsTr("The reward model %1 is reading this reply").arg(badge.modelName)
                  : qsTr("Reward from %1 (higher is better; compare replies to the same message, not across chats)").arg(badge.modelName)
                    + (badge.score.turnsLeftOut > 0
                       ? "\n" + qsTr("The oldest %n message(s) were left out to fit its context.", "", badge.score.turnsLeftOut) : "")
}
