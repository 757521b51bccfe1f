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
    Repeater {
        model: Style.probBands
        delegate: RowLayout {
            required property var modelData
            spacing: 4
            Rectangle {
                width: 14
                height: 12
                radius: 3
                color: modelData.color
                border.color: Style.border
            }
            Label {
                text: modelData.label
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
            }
        }
    }
}
