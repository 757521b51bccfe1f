// LoadBanner: progress of a model load, with Cancel. Shown under the top bar while loading.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    visible: App.loading
    color: Style.infoSoft
    implicitHeight: visible ? 52 : 0

    Rectangle {
        anchors.bottom: parent.bottom
        width: parent.width
        height: 1
        color: Style.infoBorder
    }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: Style.pagePadding
        anchors.rightMargin: 16
        spacing: 14

        BusyIndicator {
            running: App.loading
            implicitWidth: 28
            implicitHeight: 28
        }
        ColumnLayout {
            spacing: 4
            Layout.fillWidth: true
            Label {
                text: qsTr("Loading %1").arg(App.loadingPath)
                font.pixelSize: Style.fontBody
                color: Style.text
                elide: Text.ElideMiddle
                Layout.fillWidth: true
            }
            RowLayout {
                spacing: 10
                Layout.fillWidth: true
                ProgressBar {
                    objectName: "loadProgressBar"
                    from: 0
                    to: 1
                    value: App.loadProgress
                    Layout.preferredWidth: 220
                }
                Label {
                    text: Math.round(App.loadProgress * 100) + "% · " + App.loadStage
                    font.pixelSize: Style.fontSmall
                    color: Style.textMuted
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
            }
        }
        Button {
            objectName: "cancelLoadButton"
            text: qsTr("Cancel")
            flat: true
            onClicked: App.cancelLoad()
        }
    }
}
