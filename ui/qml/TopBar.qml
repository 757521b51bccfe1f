// TopBar: the strip above every page: which model is loaded, which backend runs it and why.
// At the default window size the model's summary and the backend's reason do not both fit: the model
// side gets the room (at least 260 px), the backend pill shows its name and as much of the reason as
// fits, and each elided text has its whole in a tooltip.
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
            Layout.minimumWidth: 260
            HoverHandler { id: modelHover }
            ToolTip.visible: modelHover.hovered && (modelName.truncated || modelSummary.truncated)
            ToolTip.delay: 400
            ToolTip.text: modelName.text + "\n" + modelSummary.text
            Label {
                id: modelName
                objectName: "topBarModelName"
                text: App.hasModel ? App.modelName : qsTr("No model loaded")
                font.pixelSize: Style.fontBody
                font.weight: Font.DemiBold
                color: App.hasModel ? Style.text : Style.textMuted
                elide: Text.ElideMiddle
                Layout.fillWidth: true
            }
            Label {
                id: modelSummary
                objectName: "topBarModelSummary"
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
            Layout.maximumWidth: Math.max(160, bar.width * 0.32)

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
            ToolTip.delay: 400
            ToolTip.text: App.backendName + " — " + App.backendReason + "\n" + App.backendDescription
        }

        Button {
            objectName: "topBarOpenButton"
            // Narrow windows keep the icon only; the tooltip names the action either way.
            text: bar.width > 900 ? qsTr("Open model…") : ""
            display: bar.width > 900 ? AbstractButton.TextBesideIcon : AbstractButton.IconOnly
            icon.source: "icons/folder.svg"
            flat: true
            onClicked: bar.openModelRequested()
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Open a model (Ctrl+O)")
        }
    }
}
