// ParameterSlider: a labelled slider for one sampling parameter, showing its value and meaning.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

ColumnLayout {
    id: control

    property string label
    property string hint
    // One plain sentence on what the setting does, shown on hover.
    property string tip
    property int decimals: 2
    property alias from: slider.from
    property alias to: slider.to
    property alias stepSize: slider.stepSize
    property alias value: slider.value

    spacing: 0

    HoverHandler { id: hover }
    ToolTip.visible: hover.hovered && tip.length > 0
    ToolTip.text: tip
    ToolTip.delay: 500

    RowLayout {
        Layout.fillWidth: true
        Label {
            text: control.label
            color: Style.text
            Layout.fillWidth: true
        }
        Label {
            text: slider.value.toFixed(control.decimals)
            color: Style.accent
            font.family: Style.monoFont
            font.pixelSize: Style.fontSmall
        }
    }
    Slider {
        id: slider
        Layout.fillWidth: true
        Layout.leftMargin: -6
        Layout.rightMargin: -6
    }
    Label {
        text: control.hint
        visible: text.length > 0
        color: Style.textFaint
        font.pixelSize: 11
        wrapMode: Text.Wrap
        Layout.fillWidth: true
        Layout.bottomMargin: 6
    }
}
