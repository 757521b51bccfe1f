// ProbabilityLegend: what the token colours of TokenView mean.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

RowLayout {
    spacing: 10
    Label {
        text: qsTr("Probability:")
        color: Style.textMuted
        font.pixelSize: Style.fontSmall
    }
    // By index, not over the bands themselves: the bands are a new array on every theme change, and a
    // Repeater would then delete and remake its items inside this layout, which Qt 6.4's layouts do
    // not always survive (a crash at the next relayout, seen in test_ui_smoke).
    Repeater {
        model: Style.probBands.length
        delegate: RowLayout {
            required property int index
            readonly property var band: Style.probBands[index]
            spacing: 4
            Rectangle {
                implicitWidth: 14
                implicitHeight: 12
                radius: 3
                color: band.color
                border.color: Style.border
            }
            Label {
                text: band.label
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
            }
        }
    }
}
