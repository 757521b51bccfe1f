// RewardModelButton: the Chat page's choice of a reward model (App.settings.rewardModelPath, which
// App.rewards follows): the model in use, or why it could not be loaded, and a popup listing the app's
// finished reward-model runs beside a folder picker for any other.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Workbench.Ui

Button {
    id: button
    objectName: "rewardModelButton"

    readonly property bool failed: App.rewards.error.length > 0

    // The same folder again loads it again (after a failure, or a retrained model).
    function choose(path) {
        if (App.settings.rewardModelPath === path) App.rewards.load(path)
        else App.settings.rewardModelPath = path
    }
    function localPath(url) {
        const text = url.toString()
        return text.startsWith("file://") ? decodeURIComponent(text.substring(7)) : text
    }

    text: App.rewards.ready ? qsTr("Scoring with %1").arg(App.rewards.modelName)
          : App.rewards.loading ? qsTr("Loading reward model…")
          : button.failed ? qsTr("Reward model failed")
          : qsTr("Reward model…")
    flat: true
    // Icon and text in one elided line: a long model name must not widen the sidebar.
    contentItem: RowLayout {
        spacing: 8
        Item { Layout.fillWidth: true }
        Icon {
            iconName: button.failed ? "error" : "sparkle"
            color: button.failed ? Style.error : App.rewards.ready ? Style.accent : Style.textMuted
            sourceSize.width: 16
            sourceSize.height: 16
        }
        Label {
            text: button.text
            color: button.failed ? Style.error : Style.text
            elide: Text.ElideRight
            Layout.maximumWidth: button.availableWidth - 24
        }
        Item { Layout.fillWidth: true }
    }
    onClicked: {
        popup.runs = App.rewards.trainedRewardModels()
        popup.open()
    }
    ToolTip.visible: hovered && !popup.visible
    ToolTip.delay: 500
    ToolTip.text: qsTr("A trained reward model scores replies: Score under a reply (Ctrl+Shift+R: the last one), and both replies of a comparison")

    Popup {
        id: popup
        objectName: "rewardModelPopup"
        property var runs: []
        focus: true  // Esc closes it
        // Above the button (it sits at the sidebar's foot), as wide as the window allows.
        width: 380
        x: 0
        y: -height - 6
        padding: 14
        background: Rectangle {
            color: Style.surface
            border.color: Style.border
            radius: Style.radius
        }
        contentItem: ColumnLayout {
            spacing: Style.gap
            Label {
                text: qsTr("Reward model")
                font.pixelSize: Style.fontSection
                font.weight: Font.DemiBold
                color: Style.text
            }
            Label {
                objectName: "rewardModelState"
                text: button.failed ? App.rewards.error
                      : App.rewards.loading ? qsTr("Loading %1…").arg(App.rewards.modelPath)
                      : App.rewards.ready ? qsTr("Scoring with %1 (context %2 tokens). Scores are kept until the app closes.")
                                            .arg(App.rewards.modelPath).arg(App.rewards.contextLength)
                      : qsTr("None chosen. Train one on the Train page (reward-model recipe) from the pairs Compare saves, then choose it here.")
                color: button.failed ? Style.error : Style.textMuted
                font.pixelSize: Style.fontSmall
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Label {
                visible: popup.runs.length > 0
                text: qsTr("Your reward-model runs")
                color: Style.textFaint
                font.pixelSize: Style.fontSmall
                Layout.topMargin: 4
            }
            Repeater {
                model: popup.runs
                delegate: ItemDelegate {
                    required property var modelData
                    objectName: "rewardRun"
                    text: modelData.name
                    icon.source: "icons/" + (modelData.path === App.settings.rewardModelPath ? "sparkle" : "folder") + ".svg"
                    icon.width: 16
                    icon.height: 16
                    highlighted: modelData.path === App.settings.rewardModelPath
                    Layout.fillWidth: true
                    onClicked: {
                        button.choose(modelData.path)
                        popup.close()
                    }
                    ToolTip.visible: hovered
                    ToolTip.delay: 500
                    ToolTip.text: modelData.path
                }
            }
            RowLayout {
                spacing: Style.gap
                Layout.fillWidth: true
                Button {
                    objectName: "chooseRewardFolderButton"
                    text: qsTr("Folder…")
                    icon.source: "icons/folder.svg"
                    icon.width: 16
                    icon.height: 16
                    flat: true
                    onClicked: {
                        popup.close()
                        folderDialog.open()
                    }
                }
                Item { Layout.fillWidth: true }
                Button {
                    objectName: "clearRewardModelButton"
                    visible: App.settings.rewardModelPath.length > 0
                    text: qsTr("Stop scoring")
                    flat: true
                    onClicked: {
                        App.settings.rewardModelPath = ""
                        popup.close()
                    }
                }
            }
        }
    }

    FolderDialog {
        id: folderDialog
        title: qsTr("A reward model's folder (trained with the reward-model recipe)")
        onAccepted: button.choose(button.localPath(selectedFolder))
    }
}
