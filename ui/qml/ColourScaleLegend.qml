// ColourScaleLegend: the heatmaps' colour scale from 0 to 1 with tick labels, drawn with the same
// colour function the heatmaps use (`scale.colourAt`), so legend and cells cannot disagree.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

ColumnLayout {
    id: legend
    required property var scale     // an AttentionHeatmap (anything with colourAt(value))
    property string caption: qsTr("attention weight")
    spacing: 2

    Row {
        Layout.fillWidth: true
        Repeater {
            model: 48
            delegate: Rectangle {
                required property int index
                width: legend.width / 48
                height: 10
                color: legend.scale.colourAt(index / 47)
            }
        }
    }
    RowLayout {
        Layout.fillWidth: true
        Label { text: "0"; color: Style.textMuted; font.pixelSize: Style.fontSmall }
        Item { Layout.fillWidth: true }
        Label { text: legend.caption; color: Style.textMuted; font.pixelSize: Style.fontSmall }
        Item { Layout.fillWidth: true }
        Label { text: "1"; color: Style.textMuted; font.pixelSize: Style.fontSmall }
    }
}
