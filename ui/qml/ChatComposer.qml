// ChatComposer: where the user writes. Enter sends, Shift+Enter starts a new line; while a reply is
// written the send button becomes a stop button (Esc stops too, from anywhere on the page).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    id: composer

    property bool canSend: true
    property bool generating: false
    property alias text: input.text
    property string hint
    signal sendRequested(string text)
    signal stopRequested()

    function send() {
        if (!canSend || generating || input.text.trim().length === 0) return
        const text = input.text
        input.text = ""
        composer.sendRequested(text)
    }
    function focusInput() { input.forceActiveFocus() }

    color: Style.surface
    border.color: input.activeFocus ? Style.accent : Style.border
    radius: 14
    implicitHeight: Math.min(Math.max(input.implicitHeight, 40) + 22, 220)

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 8
        anchors.rightMargin: 10
        anchors.topMargin: 6
        anchors.bottomMargin: 6
        spacing: Style.gap

        ScrollView {
            Layout.fillWidth: true
            Layout.fillHeight: true
            TextArea {
                id: input
                objectName: "chatInput"
                placeholderText: composer.hint
                wrapMode: TextArea.Wrap
                selectByMouse: true
                background: null
                font.pixelSize: Style.fontBody + 1
                Keys.onPressed: event => {
                    if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter) && !(event.modifiers & Qt.ShiftModifier)) {
                        event.accepted = true
                        composer.send()
                    }
                }
            }
        }

        RoundButton {
            id: actionButton
            objectName: composer.generating ? "stopButton" : "sendButton"
            enabled: composer.generating || (composer.canSend && input.text.trim().length > 0)
            highlighted: true
            implicitWidth: 40
            implicitHeight: 40
            padding: 0
            icon.source: composer.generating ? "icons/stop.svg" : "icons/send.svg"
            icon.width: 20
            icon.height: 20
            Layout.alignment: Qt.AlignBottom
            ToolTip.visible: hovered
            ToolTip.delay: 500
            ToolTip.text: composer.generating ? qsTr("Stop (Esc)") : qsTr("Send (Enter) · new line: Shift+Enter")
            onClicked: composer.generating ? composer.stopRequested() : composer.send()
        }
    }
}
