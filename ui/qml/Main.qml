// Main: the application window: navigation rail, model/backend bar, load progress, the pages,
// and the shortcuts and dialogs that work from everywhere.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Dialogs
import QtQuick.Layouts
import Workbench.Ui

ApplicationWindow {
    id: window

    // Order = rail order = Ctrl+N shortcut.
    readonly property var pages: [
        { key: "chat", title: qsTr("Chat"), icon: "chat" },
        { key: "playground", title: qsTr("Playground"), icon: "playground" },
        { key: "inspect", title: qsTr("Inspect"), icon: "inspect" },
        { key: "train", title: qsTr("Train"), icon: "train" },
        { key: "runs", title: qsTr("Runs"), icon: "runs" },
        { key: "models", title: qsTr("Models"), icon: "models" },
        { key: "server", title: qsTr("Server"), icon: "server" },
        { key: "settings", title: qsTr("Settings"), icon: "settings" }
    ]
    property int currentPage: 0   // Chat: the starter model answers there on a first launch

    function showPage(key) {
        for (let i = 0; i < pages.length; ++i) {
            if (pages[i].key === key) {
                currentPage = i
                return
            }
        }
    }
    function openModelFile() { fileDialog.open() }
    function openModelFolder() { folderDialog.open() }

    width: 1200
    height: 780
    minimumWidth: 880
    minimumHeight: 580
    visible: true
    title: App.hasModel ? App.modelName + " — LLM Workbench" : "LLM Workbench"

    Material.theme: Style.dark ? Material.Dark : Material.Light
    Material.accent: Style.accent
    Material.primary: Style.accent
    Material.background: Style.window
    Material.foreground: Style.text
    color: Style.window
    font.pixelSize: Style.fontBody
    // Material's all-caps buttons read as a phone app; a desktop app writes labels as sentences.
    font.capitalization: Font.MixedCase

    // Ctrl+1 .. Ctrl+8 follow the rail's order.
    Shortcut { sequence: "Ctrl+1"; onActivated: window.currentPage = 0 }
    Shortcut { sequence: "Ctrl+2"; onActivated: window.currentPage = 1 }
    Shortcut { sequence: "Ctrl+3"; onActivated: window.currentPage = 2 }
    Shortcut { sequence: "Ctrl+4"; onActivated: window.currentPage = 3 }
    Shortcut { sequence: "Ctrl+5"; onActivated: window.currentPage = 4 }
    Shortcut { sequence: "Ctrl+6"; onActivated: window.currentPage = 5 }
    Shortcut { sequence: "Ctrl+7"; onActivated: window.currentPage = 6 }
    Shortcut { sequence: "Ctrl+8"; onActivated: window.currentPage = 7 }
    Shortcut {
        sequence: "Ctrl+O"
        onActivated: window.openModelFile()
    }
    Shortcut {
        sequence: "Ctrl+Shift+O"
        onActivated: window.openModelFolder()
    }
    Shortcut {
        sequence: "Ctrl+Q"
        onActivated: Qt.quit()
    }

    FileDialog {
        id: fileDialog
        objectName: "modelFileDialog"
        title: qsTr("Open model file")
        nameFilters: [qsTr("Model files (*.gguf *.safetensors *.bin)"), qsTr("All files (*)")]
        currentFolder: App.dialogFolder
        onAccepted: App.openModel(selectedFile)
    }
    FolderDialog {
        id: folderDialog
        objectName: "modelFolderDialog"
        title: qsTr("Open model folder")
        currentFolder: App.dialogFolder
        onAccepted: App.openModel(selectedFolder)
    }

    footer: StatusBar {}

    RowLayout {
        anchors.fill: parent
        spacing: 0

        NavRail {
            objectName: "navRail"
            pages: window.pages
            currentIndex: window.currentPage
            onPageRequested: index => window.currentPage = index
            Layout.fillHeight: true
        }

        ColumnLayout {
            spacing: 0
            Layout.fillWidth: true
            Layout.fillHeight: true

            TopBar {
                Layout.fillWidth: true
                onOpenModelRequested: window.openModelFile()
            }
            LoadBanner {
                Layout.fillWidth: true
            }
            WelcomeNote {
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                Layout.topMargin: Style.gapLarge
                onPageRequested: key => window.showPage(key)
            }
            // Load errors are shown here on every page except Models, which shows them in place.
            InlineMessage {
                objectName: "globalError"
                text: window.pages[window.currentPage].key !== "models" ? App.lastError : ""
                onCloseRequested: App.clearError()
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                Layout.topMargin: Style.gapLarge
            }

            StackLayout {
                objectName: "pageStack"
                currentIndex: window.currentPage
                Layout.fillWidth: true
                Layout.fillHeight: true

                ChatPage {
                    onGoToPlaygroundRequested: window.showPage("playground")
                    onGoToInspectRequested: window.showPage("inspect")
                }
                PlaygroundPage { id: playgroundPage }
                InspectPage {
                    playgroundText: playgroundPage.runPrompt + playgroundPage.tokensA.text
                    onGoToPlaygroundRequested: window.showPage("playground")
                }
                TrainPage {
                    id: trainPage
                    onGoToPlaygroundRequested: window.showPage("playground")
                }
                RunsPage {
                    onGoToPlaygroundRequested: window.showPage("playground")
                    onEvaluateRequested: function(runId) {
                        window.showPage("train")
                        trainPage.reviewRun(runId)
                    }
                }
                ModelsPage {
                    onOpenFileRequested: window.openModelFile()
                    onOpenFolderRequested: window.openModelFolder()
                }
                ServerPage {}
                SettingsPage {}
            }
        }
    }
}
