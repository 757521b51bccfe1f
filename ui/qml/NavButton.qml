// NavButton: one destination in the navigation rail (icon, label, keyboard shortcut).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

ItemDelegate {
    id: button

    property string iconName
    property string shortcutText
    property bool current: false

    implicitHeight: 40
    padding: 0
    leftPadding: 12
    rightPadding: 12
    hoverEnabled: true
    focusPolicy: Qt.NoFocus
    Accessible.name: text

    background: Rectangle {
        radius: 8
        color: button.current ? Style.accentSoft
             : button.hovered ? (Style.dark ? "#1f2228" : "#e2e5ec") : "transparent"
        Rectangle {
            visible: button.current
            width: 3
            height: 18
            radius: 1.5
            color: Style.accent
            anchors.left: parent.left
            anchors.leftMargin: 2
            anchors.verticalCenter: parent.verticalCenter
        }
    }

    contentItem: RowLayout {
        spacing: 12
        Icon {
            iconName: button.iconName
            color: button.current ? Style.accent : Style.textMuted
        }
        Label {
            text: button.text
            color: button.current ? Style.text : Style.textMuted
            font.pixelSize: Style.fontBody
            font.weight: button.current ? Font.DemiBold : Font.Normal
            elide: Text.ElideRight
            Layout.fillWidth: true
        }
        Label {
            text: button.shortcutText
            visible: button.hovered
            color: Style.textFaint
            font.pixelSize: 11
        }
    }
}
