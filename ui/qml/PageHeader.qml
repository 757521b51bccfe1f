// PageHeader: a page's title and the one line that says what the page is for.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

ColumnLayout {
    property alias title: titleLabel.text
    property alias subtitle: subtitleLabel.text

    spacing: Style.gapSmall

    Label {
        id: titleLabel
        objectName: "pageTitle"
        font.pixelSize: Style.fontTitle
        font.weight: Font.DemiBold
        color: Style.text
        Layout.fillWidth: true
        elide: Text.ElideRight
    }
    Label {
        id: subtitleLabel
        objectName: "pageSubtitle"
        visible: text.length > 0
        font.pixelSize: Style.fontBody
        color: Style.textMuted
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
}
