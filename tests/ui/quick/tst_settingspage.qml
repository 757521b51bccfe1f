// Qt Quick Test of the Settings page: its controls show the AppSettings values and write them back,
// both ways (the setting changed elsewhere shows in the control; the control changed by the user
// changes the setting), for the CPU threads and the theme.
import QtQuick
import QtTest
import Workbench.Ui

Item {
    width: 900
    height: 700

    SettingsPage {
        id: settingsPage
        anchors.fill: parent
    }

    TestCase {
        name: "SettingsPage"
        when: windowShown

        property int savedThreads
        property string savedTheme

        function initTestCase() {
            savedThreads = App.settings.threads
            savedTheme = App.settings.theme
        }
        function cleanupTestCase() {
            App.settings.threads = savedThreads
            App.settings.theme = savedTheme
        }

        function test_threadsShowTheSetting() {
            const box = findChild(settingsPage, "threadsSpinBox")
            verify(box)
            compare(box.to, App.settings.maxThreads)
            App.settings.threads = App.settings.maxThreads
            compare(box.value, App.settings.maxThreads)
            App.settings.threads = 0
            compare(box.value, 0)
            compare(box.displayText, "All cores")
        }
        function test_threadsControlWritesTheSetting() {
            const box = findChild(settingsPage, "threadsSpinBox")
            App.settings.threads = 1
            box.forceActiveFocus()
            keyClick(Qt.Key_Up)
            compare(box.value, 2)
            compare(App.settings.threads, 2)
            keyClick(Qt.Key_Down)
            keyClick(Qt.Key_Down)
            compare(App.settings.threads, 0)
            // Typed in: the text is read back as a number.
            box.contentItem.selectAll()
            keyClick(Qt.Key_1)
            keyClick(Qt.Key_Return)
            compare(App.settings.threads, 1)
            // The user's changes did not cut the control loose from the setting.
            App.settings.threads = 2
            compare(box.value, 2)
        }
        function test_themeButtonsFollowAndSetTheTheme() {
            const light = findChild(settingsPage, "lightThemeButton")
            const dark = findChild(settingsPage, "darkThemeButton")
            verify(light && dark)
            App.settings.theme = "dark"
            verify(dark.checked)
            verify(!light.checked)
            verify(Style.dark)
            mouseClick(light)
            compare(App.settings.theme, "light")
            verify(!Style.dark)
            verify(!dark.checked)
            // Set elsewhere again (e.g. another window): the buttons still follow.
            App.settings.theme = "dark"
            verify(dark.checked)
            verify(!light.checked)
            mouseClick(light)
            compare(App.settings.theme, "light")
            mouseClick(dark)
            compare(App.settings.theme, "dark")
            verify(Style.dark)
        }
    }
}
