// WizardField: one setting of the fine-tuning wizard -- its name, its control (the item declared
// inside) and one line that says what it does.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

RowLayout {
    id: field
    property string label
    property string hint
    default property alias control: holder.data

    spacing: Style.gapLarge
    Layout.fillWidth: true

    Label { text: field.label; color: Style.text; Layout.preferredWidth: 150 }
    RowLayout { id: holder; spacing: Style.gap; Layout.preferredWidth: 260 }
    Label {
        text: field.hint
        color: Style.textMuted
        font.pixelSize: Style.fontSmall
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
}
