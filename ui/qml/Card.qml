// Card: a titled surface that groups related content on a page.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    id: card

    property string title
    property string subtitle
    // Items declared inside a Card go into its content column.
    default property alias content: body.data
    property int padding: 20

    color: Style.surface
    border.color: Style.border
    radius: Style.radius
    implicitWidth: column.implicitWidth + 2 * padding
    implicitHeight: column.implicitHeight + 2 * padding

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.margins: card.padding
        spacing: Style.gapLarge

        ColumnLayout {
            visible: card.title.length > 0
            spacing: 2
            Layout.fillWidth: true
            Label {
                text: card.title
                font.pixelSize: Style.fontSection
                font.weight: Font.DemiBold
                color: Style.text
                Layout.fillWidth: true
                elide: Text.ElideRight
            }
            Label {
                visible: card.subtitle.length > 0
                text: card.subtitle
                font.pixelSize: Style.fontSmall
                color: Style.textMuted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }

        ColumnLayout {
            id: body
            spacing: Style.gap
            Layout.fillWidth: true
            Layout.fillHeight: true
        }
    }
}
