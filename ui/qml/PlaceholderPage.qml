// PlaceholderPage: a page whose feature comes in a later release. It says plainly what will be
// here and points to what already works, so it never looks broken or empty.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page

    property string title
    property string summary       // the one line under the title
    property string iconName
    property var plans: []        // a few concrete things the page will offer
    signal goToPlaygroundRequested()

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: Style.pagePadding
        spacing: Style.gapLarge + 8

        PageHeader {
            title: page.title
            subtitle: page.summary
            Layout.fillWidth: true
        }

        Item {
            Layout.fillWidth: true
            Layout.fillHeight: true

            Card {
                anchors.centerIn: parent
                width: Math.min(parent.width, 560)
                padding: 32

                ColumnLayout {
                    spacing: Style.gapLarge
                    Layout.fillWidth: true

                    Rectangle {
                        width: 64
                        height: 64
                        radius: 32
                        color: Style.accentSoft
                        Layout.alignment: Qt.AlignHCenter
                        Icon {
                            anchors.centerIn: parent
                            iconName: page.iconName
                            sourceSize.width: 30
                            sourceSize.height: 30
                            color: Style.accent
                        }
                    }
                    Label {
                        text: qsTr("Coming in a later release")
                        font.pixelSize: 17
                        font.weight: Font.DemiBold
                        color: Style.text
                        horizontalAlignment: Text.AlignHCenter
                        Layout.fillWidth: true
                    }
                    ColumnLayout {
                        spacing: 6
                        Layout.fillWidth: true
                        Layout.leftMargin: 24
                        Layout.rightMargin: 24
                        Repeater {
                            model: page.plans
                            delegate: RowLayout {
                                id: planRow
                                required property string modelData
                                spacing: 10
                                Layout.fillWidth: true
                                Rectangle {
                                    width: 6
                                    height: 6
                                    radius: 3
                                    color: Style.accent
                                    Layout.alignment: Qt.AlignTop
                                    Layout.topMargin: 7
                                }
                                Label {
                                    text: planRow.modelData
                                    color: Style.textMuted
                                    font.pixelSize: Style.fontBody
                                    wrapMode: Text.Wrap
                                    Layout.fillWidth: true
                                }
                            }
                        }
                    }
                    Button {
                        text: qsTr("Try the Playground meanwhile")
                        icon.source: "icons/playground.svg"
                        flat: true
                        Layout.alignment: Qt.AlignHCenter
                        onClicked: page.goToPlaygroundRequested()
                    }
                }
            }
        }
    }
}
