// Icon: one of the module's monochrome SVG icons, tinted to the text colour it sits with.
import QtQuick
import QtQuick.Controls.impl
import Workbench.Ui

IconImage {
    property string iconName

    source: iconName.length > 0 ? "icons/" + iconName + ".svg" : ""
    sourceSize.width: 20
    sourceSize.height: 20
    color: Style.text
}
