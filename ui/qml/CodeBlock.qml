// CodeBlock: one fenced code block of a chat message: monospace, its language, and a copy button.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    id: block

    property string code
    property string language
    signal copyRequested(string text)

    color: Style.dark ? "#15171b" : "#f3f4f7"
    border.color: Style.border
    radius: 8
    implicitHeight: column.implicitHeight
    implicitWidth: 200

    ColumnLayout {
        id: column
        anchors.left: parent.left
        anchors.right: parent.right
        spacing: 0

        RowLayout {
            Layout.fillWidth: true
            Layout.leftMargin: 12
            Layout.rightMargin: 4
            Layout.topMargin: 2
            Label {
                text: block.language.length > 0 ? block.language : qsTr("code")
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
                font.family: Style.monoFont
                Layout.fillWidth: true
            }
            ToolButton {
                id: copyButton
                objectName: "codeCopyButton"
                property bool copied: false
                text: copied ? qsTr("Copied") : qsTr("Copy")
                icon.source: "icons/copy.svg"
                icon.width: 14
                icon.height: 14
                icon.color: Style.textMuted
                font.pixelSize: Style.fontSmall
                implicitHeight: 30
                onClicked: {
                    block.copyRequested(block.code)
                    copied = true
                    copiedTimer.restart()
                }
                Timer {
                    id: copiedTimer
                    interval: 1500
                    onTriggered: copyButton.copied = false
                }
            }
        }
        Rectangle {
            color: Style.border
            implicitHeight: 1
            Layout.fillWidth: true
        }
        TextEdit {
            text: block.code
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.WrapAnywhere
            font.family: Style.monoFont
            font.pixelSize: Style.fontBody - 1
            color: Style.text
            selectionColor: Style.accent
            Layout.fillWidth: true
            Layout.margins: 12
        }
    }
}
