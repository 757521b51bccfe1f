// ParameterSpin: a labelled whole-number setting (top-k, max tokens, seed), with a hover tip.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

RowLayout {
    id: control

    property string label
    property string tip
    property alias from: box.from
    property alias to: box.to
    property alias value: box.value
    property alias stepSize: box.stepSize
    property alias textFromValue: box.textFromValue
    property alias valueFromText: box.valueFromText

    Layout.fillWidth: true

    HoverHandler { id: hover }
    ToolTip.visible: hover.hovered && tip.length > 0
    ToolTip.text: tip
    ToolTip.delay: 500

    Label {
        text: control.label
        color: Style.text
        elide: Text.ElideRight
        Layout.fillWidth: true
    }
    SpinBox {
        id: box
        editable: true
        Layout.preferredWidth: 130
    }
}
