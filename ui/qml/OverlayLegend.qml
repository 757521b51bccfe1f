// OverlayLegend: which heads the Inspect page's overlay shows and how they are combined: the count, a
// Mean / Max switch, a chip per picked head ("L2 H5", × drops it) and Clear. Shown above the heatmap
// while an overlay is on, and above the head grid while heads are picked.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

RowLayout {
    id: legend
    objectName: "overlayLegend"

    required property HeadSelection selection
    property int mode: AttentionHeatmap.OverlayMean
    signal modeChosen(int mode)

    spacing: Style.gap

    Label {
        objectName: "overlayLegendTitle"
        text: legend.selection.count > 1
              ? (legend.mode === AttentionHeatmap.OverlayMax ? qsTr("Max of %1 heads:") : qsTr("Mean of %1 heads:")).arg(legend.selection.count)
              : qsTr("1 head picked (Ctrl-click another to overlay):")
        color: Style.text
        font.weight: Font.DemiBold
    }
    ComboBox {
        objectName: "overlayModeBox"
        visible: legend.selection.count > 1
        model: [qsTr("Mean of weights"), qsTr("Max of weights")]
        currentIndex: legend.mode === AttentionHeatmap.OverlayMax ? 1 : 0
        onActivated: (i) => legend.modeChosen(i === 1 ? AttentionHeatmap.OverlayMax : AttentionHeatmap.OverlayMean)
        implicitWidth: 170
        ToolTip.visible: hovered
        ToolTip.text: qsTr("Mean: where the picked heads attend on average (rows still sum to 1). Max: every strong link of any picked head.")
    }
    Flickable {
        Layout.fillWidth: true
        implicitHeight: 30
        contentWidth: chips.implicitWidth
        clip: true
        flickableDirection: Flickable.HorizontalFlick
        Row {
            id: chips
            spacing: Style.gapSmall
            anchors.verticalCenter: parent.verticalCenter
            Repeater {
                model: legend.selection.heads
                delegate: Rectangle {
                    id: chip
                    required property var modelData
                    height: 26
                    width: chipLabel.implicitWidth + 36
                    radius: 13
                    color: Style.accentSoft
                    border.color: Style.accent
                    Label {
                        id: chipLabel
                        x: 10
                        anchors.verticalCenter: parent.verticalCenter
                        text: qsTr("L%1 H%2").arg(chip.modelData.layer).arg(chip.modelData.head)
                        color: Style.text
                        font.pixelSize: Style.fontSmall
                    }
                    Label {
                        anchors.right: parent.right
                        anchors.rightMargin: 10
                        anchors.verticalCenter: parent.verticalCenter
                        text: "×"
                        color: Style.textMuted
                        MouseArea {
                            anchors.fill: parent
                            anchors.margins: -5
                            onClicked: legend.selection.click(chip.modelData.layer, chip.modelData.head, Qt.ControlModifier)
                        }
                    }
                }
            }
        }
    }
    Button {
        text: qsTr("Clear")
        flat: true
        onClicked: legend.selection.clear()
    }
}
