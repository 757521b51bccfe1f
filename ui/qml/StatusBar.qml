// StatusBar: the window's footer: the last thing that happened, and the engine's settings.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    color: Style.rail
    implicitHeight: 26

    Rectangle {
        width: parent.width
        height: 1
        color: Style.border
    }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 12
        anchors.rightMargin: 12
        spacing: 16
        Label {
            objectName: "statusMessage"
            text: App.statusMessage
            font.pixelSize: 11
            color: Style.textMuted
            elide: Text.ElideRight
            Layout.fillWidth: true
        }
        Label {
            text: App.backendDescription
            font.pixelSize: 11
            color: Style.textFaint
            elide: Text.ElideLeft
        }
    }
}
