// SettingsPage: engine and appearance preferences. Saved as they change.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page
    objectName: "page_settings"

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
                    Label { text: qsTr("Data folder"); color: Style.textMuted }
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
