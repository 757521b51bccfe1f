// PreferencePairsCard: the preference pairs collected with Chat's Compare: how many, the newest of
// them (the message both replies answer, the reply kept and the one not), deleting one, and the
// export of all of them as a preference dataset (JSONL that `train --recipe reward|dpo` reads), and
// once exported, training on that file in the fine-tuning wizard (trainRequested).
import QtCore
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Workbench.Ui

Card {
    id: card
    objectName: "preferencePairsCard"

    readonly property PreferencePairs prefs: App.preferences
    // The list shows the newest pairs; the export always writes all of them.
    readonly property int shownLimit: 50
    property string exportMessage
    property bool exportFailed: false
    property string exportedPath
    // Asks the page to open the fine-tuning wizard on this exported file.
    signal trainRequested(string path)

    function localPath(url) {
        const text = url.toString()
        return text.startsWith("file://") ? decodeURIComponent(text.substring(7)) : text
    }
    function pairsText(n) { return n === 1 ? qsTr("1 pair") : qsTr("%1 pairs").arg(n) }
    function exportTo(path) {
        const error = prefs.exportJsonl(path)
        exportFailed = error.length > 0
        exportedPath = exportFailed ? "" : path
        exportMessage = exportFailed ? error : qsTr("Exported %1 to %2").arg(pairsText(prefs.count)).arg(path)
    }

    title: qsTr("Preference pairs")
    subtitle: prefs.count === 0
              ? qsTr("None yet. In Chat, “Compare” under the last reply (Ctrl+Shift+C) writes a second reply; the one you pick and the other are saved here as a pair.")
              : qsTr("%1 collected in Chat with Compare: the reply kept and the one not, for reward-model and DPO training.").arg(pairsText(prefs.count))

    RowLayout {
        spacing: Style.gap
        Layout.fillWidth: true
        Label {
            objectName: "preferenceTrainHint"
            visible: card.prefs.count > 0
            text: qsTr("Train on them with: llm-workbench-cli train --recipe dpo --data FILE")
            color: Style.textMuted
            font.pixelSize: Style.fontSmall
            elide: Text.ElideRight
            Layout.fillWidth: true
        }
        Item { visible: card.prefs.count === 0; Layout.fillWidth: true }
        Button {
            objectName: "exportPreferencesButton"
            text: qsTr("Export preference dataset…")
            icon.source: "icons/download.svg"
            icon.width: 16
            icon.height: 16
            flat: true
            enabled: card.prefs.count > 0
            onClicked: {
                exportPath.text = card.localPath(StandardPaths.writableLocation(StandardPaths.DocumentsLocation))
                                  + "/preferences.jsonl"
                exportDialog.open()
            }
            ToolTip.visible: hovered
            ToolTip.delay: 500
            ToolTip.text: qsTr("Every pair as JSONL: {prompt (the conversation as messages), chosen, rejected}")
        }
    }

    InlineMessage {
        objectName: "preferenceExportMessage"
        text: card.exportMessage
        isError: card.exportFailed
        onCloseRequested: card.exportMessage = ""
        Layout.fillWidth: true
    }
    Button {
        objectName: "preferenceTrainButton"
        visible: card.exportedPath.length > 0
        text: qsTr("Train a reward model or DPO on them…")
        flat: true
        onClicked: card.trainRequested(card.exportedPath)
        ToolTip.visible: hovered
        ToolTip.delay: 500
        ToolTip.text: qsTr("Opens the fine-tuning wizard with %1").arg(card.exportedPath)
    }
    InlineMessage {
        objectName: "preferenceError"
        text: card.prefs.lastError
        onCloseRequested: card.prefs.clearError()
        Layout.fillWidth: true
    }

    Repeater {
        model: card.prefs.pairs.slice(0, card.shownLimit)
        delegate: Rectangle {
            id: pairRow
            required property var modelData
            required property int index
            objectName: "preferencePair"
            color: Style.surfaceAlt
            border.color: Style.border
            radius: Style.radius - 2
            Layout.fillWidth: true
            implicitHeight: pairColumn.implicitHeight + 20

            ColumnLayout {
                id: pairColumn
                anchors.left: parent.left
                anchors.right: parent.right
                anchors.top: parent.top
                anchors.margins: 10
                anchors.leftMargin: 14
                spacing: 4
                RowLayout {
                    spacing: Style.gap
                    Layout.fillWidth: true
                    Label {
                        text: pairRow.modelData.prompt
                        font.weight: Font.DemiBold
                        color: Style.text
                        elide: Text.ElideRight
                        maximumLineCount: 1
                        Layout.fillWidth: true
                    }
                    Label {
                        text: [pairRow.modelData.model, pairRow.modelData.created].filter(s => s.length > 0).join(" · ")
                        color: Style.textFaint
                        font.pixelSize: Style.fontSmall
                    }
                    ToolButton {
                        objectName: "deletePreferencePair"
                        icon.source: "icons/trash.svg"
                        icon.width: 16
                        icon.height: 16
                        icon.color: Style.textMuted
                        implicitWidth: 30
                        implicitHeight: 28
                        padding: 0
                        onClicked: card.prefs.deletePair(pairRow.modelData.id)
                        ToolTip.visible: hovered
                        ToolTip.delay: 500
                        ToolTip.text: qsTr("Delete this pair (its chat is not changed)")
                    }
                }
                Repeater {
                    model: [{ kept: true, text: pairRow.modelData.chosen }, { kept: false, text: pairRow.modelData.rejected }]
                    delegate: RowLayout {
                        required property var modelData
                        spacing: Style.gap
                        Layout.fillWidth: true
                        Label {
                            text: modelData.kept ? (pairRow.modelData.edited ? qsTr("Kept (edited)") : qsTr("Kept"))
                                                 : qsTr("Not kept")
                            color: modelData.kept ? Style.good : Style.textMuted
                            font.pixelSize: Style.fontSmall
                            font.weight: Font.DemiBold
                            Layout.preferredWidth: 92
                            Layout.alignment: Qt.AlignTop
                        }
                        Label {
                            text: modelData.text.replace(/\s+/g, " ").trim()
                            color: modelData.kept ? Style.text : Style.textMuted
                            wrapMode: Text.Wrap
                            maximumLineCount: 2
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                    }
                }
            }
        }
    }
    Label {
        visible: card.prefs.count > card.shownLimit
        text: qsTr("and %1 older pairs (all of them are exported)").arg(card.prefs.count - card.shownLimit)
        color: Style.textMuted
        font.pixelSize: Style.fontSmall
    }

    Dialog {
        id: exportDialog
        objectName: "preferenceExportDialog"
        title: qsTr("Export preference dataset")
        modal: true
        parent: Overlay.overlay
        anchors.centerIn: parent
        width: Math.min(parent ? parent.width - 80 : 600, 600)
        standardButtons: Dialog.Save | Dialog.Cancel
        onOpened: {
            exportPath.forceActiveFocus()
            const slash = exportPath.text.lastIndexOf("/")
            exportPath.select(slash + 1, exportPath.text.length - ".jsonl".length)
        }
        onAccepted: card.exportTo(exportPath.text)
        ColumnLayout {
            anchors.fill: parent
            spacing: Style.gap
            Label {
                text: qsTr("Write all %1 as JSONL (the file is replaced whole, never half-written):").arg(card.pairsText(card.prefs.count))
                color: Style.textMuted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            RowLayout {
                spacing: Style.gap
                Layout.fillWidth: true
                TextField {
                    id: exportPath
                    objectName: "preferenceExportPath"
                    selectByMouse: true
                    Layout.fillWidth: true
                    onAccepted: if (text.trim().length > 0) exportDialog.accept()
                }
                Button {
                    text: qsTr("Folder…")
                    flat: true
                    onClicked: folderDialog.open()
                }
            }
        }
    }
    FolderDialog {
        id: folderDialog
        title: qsTr("Folder to export the preference dataset to")
        onAccepted: {
            const name = exportPath.text.substring(exportPath.text.lastIndexOf("/") + 1)
            exportPath.text = card.localPath(selectedFolder) + "/" + name
        }
    }
}
