// NavRail: the app's left-hand navigation: brand, one button per page, and the model in use.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    id: rail

    // [{key, title, icon}] in page order; the index is the page's position in the StackLayout.
    property var pages: []
    property int currentIndex: 0
    signal pageRequested(int index)

    color: Style.rail
    implicitWidth: Style.railWidth

    Rectangle {
        anchors.right: parent.right
        width: 1
        height: parent.height
        color: Style.border
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 12
        anchors.rightMargin: 13
        spacing: 2

        RowLayout {
            spacing: 10
            Layout.leftMargin: 6
            Layout.topMargin: 6
            Layout.bottomMargin: 18
            Image {
                source: "icons/logo.svg"
                sourceSize.width: 32
                sourceSize.height: 32
                Layout.preferredWidth: 32
                Layout.preferredHeight: 32
            }
            ColumnLayout {
                spacing: 0
                Label {
                    text: "LLM Workbench"
                    font.pixelSize: 15
                    font.weight: Font.DemiBold
                    color: Style.text
                }
                Label {
                    text: qsTr("version %1").arg(App.version)
                    font.pixelSize: 11
                    color: Style.textFaint
                }
            }
        }

        ListView {
            id: list
            model: rail.pages
            currentIndex: rail.currentIndex
            interactive: false
            spacing: 2
            implicitHeight: contentHeight
            Layout.fillWidth: true
            // A click sets the list's index (which breaks the binding above), so the rail's index
            // is also pushed explicitly; a click becomes a request the window may follow.
            Connections {
                target: rail
                function onCurrentIndexChanged() { list.currentIndex = rail.currentIndex }
            }
            onCurrentIndexChanged: if (currentIndex !== rail.currentIndex) rail.pageRequested(currentIndex)

            delegate: NavButton {
                id: navButton
                required property var modelData
                required property int index
                objectName: "nav_" + modelData.key
                width: ListView.view.width
                text: modelData.title
                iconName: modelData.icon
                shortcutText: "Ctrl+" + (index + 1)
                current: ListView.isCurrentItem
                onClicked: navButton.ListView.view.currentIndex = navButton.index
            }
        }

        Item { Layout.fillHeight: true }

        // The model in use, always in view.
        Rectangle {
            Layout.fillWidth: true
            implicitHeight: modelColumn.implicitHeight + 20
            radius: 8
            color: Style.dark ? "#1a1d22" : "#f7f8fb"
            border.color: Style.border

            ColumnLayout {
                id: modelColumn
                anchors.fill: parent
                anchors.margins: 10
                spacing: 2
                RowLayout {
                    spacing: 6
                    Rectangle {
                        width: 8
                        height: 8
                        radius: 4
                        color: App.loading ? Style.warn : App.hasModel ? Style.good : Style.textFaint
                    }
                    Label {
                        text: App.loading ? qsTr("Loading…") : App.hasModel ? qsTr("Model ready") : qsTr("No model")
                        font.pixelSize: 11
                        color: Style.textMuted
                    }
                }
                Label {
                    text: App.hasModel ? App.modelName : qsTr("Open one with Ctrl+O")
                    font.pixelSize: 13
                    font.weight: App.hasModel ? Font.DemiBold : Font.Normal
                    color: App.hasModel ? Style.text : Style.textMuted
                    elide: Text.ElideMiddle
                    Layout.fillWidth: true
                }
            }
        }
    }
}
