// InlineMessage: a banner for errors and notices inside the content area (KDE's inline message
// pattern): readable, selectable text and a way to dismiss it, never a modal box.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    id: message

    property string text
    property bool isError: true
    property bool closable: true
    signal closeRequested()

    visible: text.length > 0
    color: isError ? Style.errorSoft : Style.infoSoft
    border.color: isError ? Style.errorBorder : Style.infoBorder
    radius: Style.radius - 2
    implicitHeight: row.implicitHeight + 20
    implicitWidth: row.implicitWidth + 28

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 14
        anchors.rightMargin: 6
        anchors.topMargin: 10
        anchors.bottomMargin: 10
        spacing: Style.gap + 2

        Icon {
            iconName: message.isError ? "error" : "info"
            color: message.isError ? Style.error : Style.accent
            Layout.alignment: Qt.AlignTop
        }
        TextEdit {
            objectName: "inlineMessageText"
            text: message.text
            readOnly: true
            selectByMouse: true
            wrapMode: Text.Wrap
            color: message.isError ? Style.error : Style.text
            selectionColor: Style.accent
            font.pixelSize: Style.fontBody
            Layout.fillWidth: true
            Layout.alignment: Qt.AlignVCenter
        }
        ToolButton {
            visible: message.closable
            icon.source: "icons/close.svg"
            icon.width: 16
            icon.height: 16
            icon.color: Style.textMuted
            implicitWidth: 32
            implicitHeight: 32
            padding: 0
            Layout.alignment: Qt.AlignTop
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Dismiss")
            onClicked: message.closeRequested()
        }
    }
}
