// SettingsPage: engine and appearance preferences (saved as they change), and where the user's data
// is kept: the session database (chats, presets, run records) and the training runs' folders.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page
    objectName: "page_settings"

    // A folder path as the system's file manager opens it.
    function folderUrl(path) { return "file://" + path.split("/").map(encodeURIComponent).join("/") }
    function folderOf(path) { return path.substring(0, path.lastIndexOf("/")) }

    component FolderRow: RowLayout {
        id: folderRow
        property string label
        property string hint
        property string path
        spacing: Style.gapLarge
        Layout.fillWidth: true
        ColumnLayout {
            spacing: 2
            Layout.fillWidth: true
            Label { text: folderRow.label; color: Style.text }
            Label {
                objectName: folderRow.objectName + "Path"
                text: folderRow.path
                color: Style.text
                font.family: Style.monoFont
                font.pixelSize: Style.fontSmall
                wrapMode: Text.WrapAnywhere
                Layout.fillWidth: true
            }
            Label {
                text: folderRow.hint
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }
        Button {
            objectName: folderRow.objectName + "Open"
            text: qsTr("Open folder")
            icon.source: "icons/folder.svg"
            flat: true
            enabled: folderRow.path.length > 0
            onClicked: Qt.openUrlExternally(page.folderUrl(folderRow.path))
        }
    }

    ScrollView {
        id: scroll
        anchors.fill: parent
        contentWidth: availableWidth
        clip: true

        ColumnLayout {
            width: Math.min(scroll.availableWidth, 760 + 2 * Style.pagePadding)
            spacing: Style.gapLarge + 4

            PageHeader {
                title: qsTr("Settings")
                subtitle: qsTr("Preferences are saved as soon as you change them.")
                Layout.fillWidth: true
                Layout.topMargin: Style.pagePadding
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
            }

            Card {
                title: qsTr("Performance")
                subtitle: qsTr("How the CPU backend runs. A GPU, when present, is used instead.")
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding

                RowLayout {
                    spacing: Style.gapLarge
                    Layout.fillWidth: true
                    ColumnLayout {
                        spacing: 2
                        Layout.fillWidth: true
                        Label {
                            text: qsTr("CPU threads")
                            color: Style.text
                            font.pixelSize: Style.fontBody
                        }
                        Label {
                            text: qsTr("0 uses all cores. Applies the next time a model loads.")
                            color: Style.textMuted
                            font.pixelSize: Style.fontSmall
                            wrapMode: Text.Wrap
                            Layout.fillWidth: true
                        }
                    }
                    SpinBox {
                        id: threadsBox
                        objectName: "threadsSpinBox"
                        from: 0
                        to: App.settings.maxThreads
                        value: App.settings.threads
                        editable: true
                        textFromValue: function(value) { return value === 0 ? qsTr("All cores") : value.toString() }
                        valueFromText: function(text) {
                            const n = parseInt(text)
                            return isNaN(n) ? 0 : n
                        }
                        Layout.preferredWidth: 170
                        onValueModified: App.settings.threads = value
                    }
                }
                RowLayout {
                    spacing: Style.gap
                    Layout.fillWidth: true
                    Label {
                        text: App.backendDescription.length > 0 ? qsTr("Now: %1").arg(App.backendDescription) : ""
                        color: Style.textMuted
                        font.pixelSize: Style.fontSmall
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    Button {
                        text: App.hasModel ? qsTr("Reload model now") : qsTr("Apply now")
                        icon.source: "icons/reload.svg"
                        flat: true
                        enabled: !App.loading
                        onClicked: App.reloadModel()
                    }
                }
            }

            Card {
                title: qsTr("Appearance")
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding

                RowLayout {
                    spacing: Style.gapLarge
                    Layout.fillWidth: true
                    Label {
                        text: qsTr("Theme")
                        color: Style.text
                        font.pixelSize: Style.fontBody
                        Layout.fillWidth: true
                    }
                    ButtonGroup { id: themeGroup }
                    RadioButton {
                        objectName: "lightThemeButton"
                        text: qsTr("Light")
                        checked: !App.settings.darkTheme
                        ButtonGroup.group: themeGroup
                        onClicked: App.settings.theme = "light"
                    }
                    RadioButton {
                        objectName: "darkThemeButton"
                        text: qsTr("Dark")
                        checked: App.settings.darkTheme
                        ButtonGroup.group: themeGroup
                        onClicked: App.settings.theme = "dark"
                    }
                }
            }

            Card {
                title: qsTr("Your data")
                subtitle: qsTr("Kept on this computer only. Back up these folders to keep your chats and trained models.")
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding

                FolderRow {
                    objectName: "databaseFolder"
                    label: qsTr("Chats, presets and run history")
                    path: page.folderOf(App.databasePath)
                    hint: qsTr("in the database file %1").arg(App.databasePath.split("/").pop())
                }
                FolderRow {
                    objectName: "runsFolder"
                    label: qsTr("Training runs")
                    path: App.runsDir
                    hint: qsTr("one folder per run: the trained model, its checkpoints and exports")
                }
            }

            Card {
                title: qsTr("About")
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                Layout.bottomMargin: Style.pagePadding

                GridLayout {
                    columns: 2
                    columnSpacing: 24
                    rowSpacing: 8
                    Layout.fillWidth: true
                    Label { text: qsTr("Version"); color: Style.textMuted }
                    Label { text: App.version; color: Style.text; Layout.fillWidth: true }
                    Label { text: qsTr("App resources"); color: Style.textMuted }
                    Label {
                        text: App.dataDir
                        color: Style.text
                        font.family: Style.monoFont
                        font.pixelSize: Style.fontSmall
                        wrapMode: Text.WrapAnywhere
                        Layout.fillWidth: true
                    }
                    Label { text: qsTr("Backend"); color: Style.textMuted }
                    Label {
                        text: App.backendName.length > 0 ? App.backendName + " — " + App.backendReason : "—"
                        color: Style.text
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                }
            }
        }
    }
}
