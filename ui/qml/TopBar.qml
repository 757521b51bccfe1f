// TopBar: the strip above every page: which model is loaded, which backend runs it and why.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    id: bar

    signal openModelRequested()

    color: Style.surface
    implicitHeight: 56

    Rectangle {
        anchors.bottom: parent.bottom
        width: parent.width
        height: 1
        color: Style.border
    }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: Style.pagePadding
        anchors.rightMargin: 16
        spacing: 12

        Icon {
            iconName: "models"
            color: App.hasModel ? Style.accent : Style.textFaint
        }
        ColumnLayout {
            spacing: 0
            Layout.fillWidth: true
            Label {
                objectName: "topBarModelName"
                text: App.hasModel ? App.modelName : qsTr("No model loaded")
                font.pixelSize: Style.fontBody
                font.weight: Font.DemiBold
                color: App.hasModel ? Style.text : Style.textMuted
                elide: Text.ElideMiddle
                Layout.fillWidth: true
            }
            Label {
                text: App.hasModel ? App.modelInfo : qsTr("Open one to get started (Ctrl+O)")
                font.pixelSize: Style.fontSmall
                color: Style.textMuted
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
        }

        // Backend pill: the device and, just as important, why it was chosen.
        Rectangle {
            objectName: "backendPill"
            visible: App.backendName.length > 0
            radius: height / 2
            color: Style.surfaceAlt
            border.color: Style.border
            implicitHeight: 30
            implicitWidth: pillRow.implicitWidth + 24
            Layout.maximumWidth: bar.width * 0.4

            RowLayout {
                id: pillRow
                anchors.fill: parent
                anchors.leftMargin: 10
                anchors.rightMargin: 12
                spacing: 6
                Icon {
                    iconName: "chip"
                    sourceSize.width: 16
                    sourceSize.height: 16
                    color: App.backendName === "CUDA" ? Style.good : Style.textMuted
                }
                Label {
                    objectName: "backendLabel"
                    text: App.backendReason.length > 0 ? App.backendName + " — " + App.backendReason : App.backendName
                    font.pixelSize: Style.fontSmall
                    color: Style.text
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
            }
            HoverHandler { id: pillHover }
            ToolTip.visible: pillHover.hovered
            ToolTip.text: App.backendName + " — " + App.backendReason + "\n" + App.backendDescription
        }

        Button {
            text: qsTr("Open model…")
            icon.source: "icons/folder.svg"
            flat: true
            onClicked: bar.openModelRequested()
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Open a model (Ctrl+O)")
        }
    }
}
