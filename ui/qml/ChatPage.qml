// ChatPage: conversations with the loaded model. Chats live in the ChatStore and are saved as
// they happen; the sidebar lists and searches them, the conversation shows the active branch of the
// message tree with per-reply stats, and the header shows how much of the model's context is used.
import QtCore
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page
    objectName: "page_chat"

    signal goToPlaygroundRequested()
    signal goToInspectRequested()

    readonly property bool canSend: App.hasModel && App.modelHasTokenizer && !App.loading && !(App.generating && !App.chat.generating)
    property bool storageNoticeClosed: false
    property bool showSystemPrompt: false
    property var exportChatId: 0
    property string exportFormat: "md"
    property string fileMessage
    // How the model reads the chat: its chat template's family, by name.
    readonly property string promptFormat: ({ chatml: "ChatML", llama3: "Llama 3", llama2: "Llama 2", zephyr: "Zephyr",
                                              alpaca: "Alpaca", plain: qsTr("Plain transcript") })[App.chatTemplateName]
                                           ?? App.chatTemplateName

    function copyText(text) {
        clipboard.text = text
        clipboard.selectAll()
        clipboard.copy()
        clipboard.text = ""
    }
    function send(text) {
        if (!App.chat.send(text)) composer.text = text
    }
    function undoDelete() {
        undoTimer.stop()
        App.chat.undoDelete()
    }
    // A search hit opened: bring its message into view (after the list has laid out the chat).
    function showHighlighted() {
        const row = App.chat.highlightedRow
        if (row < 0) return
        // The view lists the newest message first.
        messageList.positionViewAtIndex(messageList.count - 1 - row, ListView.Center)
    }
    function startExport(chatId, format) {
        if (chatId !== App.chat.currentChatId) App.chat.selectChat(chatId)
        exportFormat = format
        exportPath.text = localPath(StandardPaths.writableLocation(StandardPaths.DocumentsLocation)) + "/"
                          + exportFileName(App.chat.currentTitle, format)
        exportDialog.open()
    }
    // A file name from a chat title: characters file systems refuse become "-", never empty.
    function exportFileName(title, format) {
        const name = title.replace(/[\/\\:*?"<>|\x00-\x1f]+/g, "-").replace(/^[\s.-]+|[\s.-]+$/g, "")
        return (name.length > 0 ? name : qsTr("chat")) + "." + format
    }
    function localPath(url) {
        const text = url.toString()
        return text.startsWith("file://") ? decodeURIComponent(text.substring(7)) : text
    }
    function exportTo(path) {
        const error = exportFormat === "md" ? App.chat.exportMarkdown(path) : App.chat.exportJson(path)
        fileMessage = error.length > 0 ? error : qsTr("Exported to %1").arg(path)
    }

    // QML has no clipboard API of its own; a hidden TextEdit's copy() uses the system clipboard.
    TextEdit { id: clipboard; visible: false }

    Shortcut {
        sequence: "Ctrl+N"
        enabled: page.visible
        onActivated: {
            App.chat.newChat()
            composer.focusInput()
        }
    }
    Shortcut {
        sequence: "Escape"
        enabled: page.visible && App.chat.generating
        onActivated: App.chat.stop()
    }
    // Compare: a second reply to the last message, and the pick between the two.
    Shortcut {
        objectName: "compareShortcut"
        sequence: "Ctrl+Shift+C"
        enabled: page.visible && page.canSend && !App.chat.generating && !App.chat.comparing && messageList.count > 0
        onActivated: App.chat.compareLastReply()
    }
    Shortcut {
        sequence: "Ctrl+Shift+A"
        enabled: page.visible && comparePanel.canPick
        onActivated: comparePanel.keep("A")
    }
    Shortcut {
        sequence: "Ctrl+Shift+B"
        enabled: page.visible && comparePanel.canPick
        onActivated: comparePanel.keep("B")
    }
    // Reward model: scores the chat's last reply.
    Shortcut {
        objectName: "scoreShortcut"
        sequence: "Ctrl+Shift+R"
        enabled: page.visible && App.chat.rewardModelName.length > 0 && messageList.count > 0
        onActivated: App.chat.scoreLastReply()
    }
    // Not while a reply is edited in the comparison: Esc there leaves the editor, not the comparison.
    Shortcut {
        sequence: "Escape"
        enabled: page.visible && App.chat.comparing && !App.chat.generating && comparePanel.editing.length === 0
        onActivated: App.chat.dismissComparison()
    }
    // Undo of a deleted chat or message. A text field with focus keeps Ctrl+Z for its own text.
    Shortcut {
        objectName: "undoDeleteShortcut"
        sequences: [StandardKey.Undo]
        enabled: page.visible && App.chat.undoText.length > 0
        onActivated: page.undoDelete()
    }

    // Export: a path proposed from the chat's title in the Documents folder, editable, with a folder
    // picker beside it; Enter or Save writes the file. (The file dialog Qt 6.4 shows where the
    // platform has none offers no name to save under and an "Open" button.)
    Dialog {
        id: exportDialog
        objectName: "chatExportDialog"
        title: page.exportFormat === "md" ? qsTr("Export chat as Markdown") : qsTr("Export chat as JSON")
        modal: true
        anchors.centerIn: Overlay.overlay
        width: Math.min(page.width - 80, 600)
        standardButtons: Dialog.Save | Dialog.Cancel
        onOpened: {
            exportPath.forceActiveFocus()
            // The name is what one changes most: select it, not the folder or the suffix.
            const slash = exportPath.text.lastIndexOf("/")
            exportPath.select(slash + 1, exportPath.text.length - page.exportFormat.length - 1)
        }
        onAccepted: page.exportTo(exportPath.text)
        ColumnLayout {
            spacing: Style.gap
            Label {
                text: qsTr("Save the chat's shown messages (the active branch) to:")
                color: Style.textMuted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            RowLayout {
                spacing: Style.gap
                Layout.fillWidth: true
                TextField {
                    id: exportPath
                    objectName: "exportPathField"
                    selectByMouse: true
                    Layout.fillWidth: true
                    onAccepted: if (text.trim().length > 0) exportDialog.accept()
                }
                Button {
                    text: qsTr("Folder…")
                    flat: true
                    onClicked: exportFolderDialog.open()
                }
            }
        }
    }
    FolderDialog {
        id: exportFolderDialog
        title: qsTr("Folder to export the chat to")
        onAccepted: {
            const name = exportPath.text.substring(exportPath.text.lastIndexOf("/") + 1)
            exportPath.text = page.localPath(selectedFolder) + "/" + name
        }
    }
    FileDialog {
        id: importDialog
        objectName: "chatImportDialog"
        title: qsTr("Import a chat (OpenAI messages JSON)")
        fileMode: FileDialog.OpenFile
        nameFilters: [qsTr("JSON (*.json)"), qsTr("All files (*)")]
        onAccepted: page.fileMessage = App.chat.importJson(selectedFile)
    }
    Timer {
        id: undoTimer
        interval: 8000
        onTriggered: App.chat.finalizeDelete()
    }
    Connections {
        target: App.chat
        function onDeletedChanged() { if (App.chat.undoText.length > 0) undoTimer.restart() }
        function onHighlightChanged() { if (App.chat.highlightedRow >= 0) Qt.callLater(page.showHighlighted) }
        function onCurrentChatChanged() { page.showSystemPrompt = App.chat.systemPrompt.length > 0 }
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        ChatSidebar {
            Layout.fillHeight: true
            Layout.preferredWidth: 268
            onImportRequested: importDialog.open()
            onExportRequested: (chatId, format) => page.startExport(chatId, format)
        }

        ColumnLayout {
            spacing: Style.gap + 4
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.margins: Style.pagePadding - 4
            Layout.bottomMargin: Style.gapLarge

            RowLayout {
                spacing: Style.gapLarge
                Layout.fillWidth: true
                // The page title, and the open chat's title on one line (elided: the buttons beside it
                // keep their room).
                ColumnLayout {
                    spacing: Style.gapSmall
                    Layout.fillWidth: true
                    Layout.minimumWidth: 120
                    Label {
                        objectName: "pageTitle"
                        text: qsTr("Chat")
                        font.pixelSize: Style.fontTitle
                        font.weight: Font.DemiBold
                        color: Style.text
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    Label {
                        objectName: "pageSubtitle"
                        text: App.chat.currentChatId ? App.chat.currentTitle
                                                     : qsTr("Talk with the loaded model; every chat is saved as you go.")
                        font.pixelSize: Style.fontBody
                        color: Style.textMuted
                        elide: Text.ElideRight
                        maximumLineCount: 1
                        Layout.fillWidth: true
                        HoverHandler { id: subtitleHover }
                        ToolTip.visible: subtitleHover.hovered && truncated
                        ToolTip.text: text
                        ToolTip.delay: 500
                    }
                }
                // Context use: the rendered chat (template and system prompt included) against the model's window.
                ColumnLayout {
                    objectName: "contextMeter"
                    visible: App.chat.contextLength > 0
                    spacing: 4
                    Layout.preferredWidth: 190
                    Label {
                        objectName: "contextLabel"
                        text: qsTr("Context %1 / %2").arg(App.chat.contextUsed.toLocaleString(Qt.locale(), 'f', 0))
                                                     .arg(App.chat.contextLength.toLocaleString(Qt.locale(), 'f', 0))
                        color: App.chat.contextWarning.length > 0 ? Style.warn : Style.textMuted
                        font.pixelSize: Style.fontSmall
                        Layout.alignment: Qt.AlignRight
                    }
                    Rectangle {
                        color: Style.border
                        radius: 3
                        implicitHeight: 6
                        Layout.fillWidth: true
                        Rectangle {
                            width: parent.width * Math.min(1, App.chat.contextUsed / Math.max(1, App.chat.contextLength))
                            height: parent.height
                            radius: 3
                            color: App.chat.contextWarning.length > 0 ? Style.warn : Style.accent
                        }
                    }
                    Label {
                        objectName: "promptFormatLabel"
                        text: qsTr("Format: %1").arg(page.promptFormat)
                        color: Style.textMuted
                        font.pixelSize: Style.fontSmall
                        elide: Text.ElideRight
                        Layout.alignment: Qt.AlignRight
                        Layout.maximumWidth: 190
                        HoverHandler { id: formatHover }
                        ToolTip.visible: formatHover.hovered
                        ToolTip.delay: 500
                        ToolTip.text: App.chatTemplateName === "plain"
                                      ? qsTr("The model names no chat template, so chats are written as a plain transcript (“User: …”, “Assistant: …”); a base model continues it as text.")
                                      : qsTr("Chats are written with the model's own chat template (%1); only its markup makes special tokens.").arg(page.promptFormat)
                    }
                }
                Button {
                    objectName: "systemPromptButton"
                    text: App.chat.systemPrompt.length > 0 ? qsTr("System prompt ●") : qsTr("System prompt")
                    icon.source: "icons/edit.svg"
                    icon.width: 16
                    icon.height: 16
                    icon.color: page.showSystemPrompt ? Style.accent : Style.textMuted
                    flat: true
                    enabled: App.chat.currentChatId !== 0
                    onClicked: page.showSystemPrompt = !page.showSystemPrompt
                    ToolTip.visible: hovered
                    ToolTip.delay: 500
                    ToolTip.text: qsTr("Instructions the model reads before this chat")
                }
                Button {
                    objectName: "chatSamplingButton"
                    text: qsTr("Sampling")
                    icon.source: "icons/settings.svg"
                    icon.width: 16
                    icon.height: 16
                    icon.color: Style.textMuted
                    flat: true
                    onClicked: samplingPopup.open()
                    ToolTip.visible: hovered
                    ToolTip.delay: 500
                    ToolTip.text: qsTr("Sampling settings for the next replies (each reply keeps the ones it was made with)")
                    Popup {
                        id: samplingPopup
                        objectName: "chatSamplingPopup"
                        y: parent.height + 4
                        x: parent.width - width
                        width: 340
                        height: Math.min(page.height - 120, 640)
                        padding: 12
                        onOpened: chatSampler.apply(App.chat.generationSettings)
                        onClosed: App.chat.generationSettings = chatSampler.values()
                        background: Rectangle {
                            color: Style.surface
                            border.color: Style.border
                            radius: Style.radius
                        }
                        ScrollView {
                            id: samplingScroll
                            anchors.fill: parent
                            contentWidth: availableWidth
                            clip: true
                            SamplerSettings {
                                id: chatSampler
                                objectName: "chatSampler"
                                showAlternatives: false  // a chat shows text, not per-token alternatives
                                width: samplingScroll.availableWidth
                            }
                        }
                    }
                }
                Button {
                    id: exportButton
                    objectName: "exportButton"
                    text: qsTr("Export")
                    icon.source: "icons/download.svg"
                    icon.width: 16
                    icon.height: 16
                    flat: true
                    enabled: App.chat.currentChatId !== 0
                    // Under the button, its right edge on the button's: the window's edge is near.
                    onClicked: exportMenu.popup(exportButton, exportButton.width - exportMenu.width, exportButton.height + 4)
                    Menu {
                        id: exportMenu
                        objectName: "exportMenu"
                        margins: 8
                        MenuItem { text: qsTr("Markdown…"); onTriggered: page.startExport(App.chat.currentChatId, "md") }
                        MenuItem { text: qsTr("JSON (OpenAI messages)…"); onTriggered: page.startExport(App.chat.currentChatId, "json") }
                    }
                }
            }

            Rectangle {
                visible: page.showSystemPrompt && App.chat.currentChatId !== 0
                color: Style.surface
                border.color: Style.border
                radius: Style.radius
                Layout.fillWidth: true
                implicitHeight: Math.min(systemArea.implicitHeight + 40, 180)
                ColumnLayout {
                    anchors.fill: parent
                    anchors.margins: 10
                    spacing: 2
                    Label {
                        text: qsTr("System prompt for this chat")
                        color: Style.textMuted
                        font.pixelSize: Style.fontSmall
                    }
                    ScrollView {
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        TextArea {
                            id: systemArea
                            objectName: "systemPromptArea"
                            text: App.chat.systemPrompt
                            placeholderText: qsTr("You are a helpful assistant.")
                            wrapMode: TextArea.Wrap
                            selectByMouse: true
                            background: null
                            onTextChanged: if (activeFocus) systemTimer.restart()
                            onActiveFocusChanged: if (!activeFocus) App.chat.systemPrompt = text
                        }
                    }
                    Timer {
                        id: systemTimer
                        interval: 600
                        onTriggered: App.chat.systemPrompt = systemArea.text
                    }
                }
            }

            InlineMessage {
                objectName: "storageProblem"
                text: page.storageNoticeClosed ? "" : App.chat.storageProblem
                isError: false
                onCloseRequested: page.storageNoticeClosed = true
                Layout.fillWidth: true
            }
            Rectangle {
                objectName: "undoBanner"
                visible: App.chat.undoText.length > 0
                color: Style.infoSoft
                border.color: Style.infoBorder
                radius: Style.radius - 2
                Layout.fillWidth: true
                implicitHeight: 44
                RowLayout {
                    anchors.fill: parent
                    anchors.leftMargin: 14
                    anchors.rightMargin: 6
                    Label {
                        objectName: "undoText"
                        text: App.chat.undoText
                        color: Style.text
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    Button {
                        objectName: "undoDeleteButton"
                        text: qsTr("Undo")
                        flat: true
                        highlighted: true
                        onClicked: page.undoDelete()
                        ToolTip.visible: hovered
                        ToolTip.delay: 500
                        ToolTip.text: qsTr("Bring it back (Ctrl+Z)")
                    }
                }
            }
            InlineMessage {
                objectName: "chatError"
                text: App.chat.lastError
                onCloseRequested: App.chat.clearError()
                Layout.fillWidth: true
            }
            InlineMessage {
                objectName: "fileMessage"
                text: page.fileMessage
                isError: page.fileMessage.startsWith(qsTr("Cannot"))
                onCloseRequested: page.fileMessage = ""
                Layout.fillWidth: true
            }
            InlineMessage {
                objectName: "contextWarning"
                text: App.chat.contextWarning
                isError: false  // what the next reply will read, not a failure
                closable: false
                Layout.fillWidth: true
            }

            Item {
                Layout.fillWidth: true
                Layout.fillHeight: true

                ListView {
                    id: messageList
                    objectName: "messageList"
                    anchors.top: parent.top
                    anchors.bottom: parent.bottom
                    anchors.horizontalCenter: parent.horizontalCenter
                    width: Math.min(parent.width, 920)
                    // Newest message first, laid out from the bottom up: the newest message stays at the
                    // bottom edge while it grows and while older messages above it are created and
                    // measured, so the view follows a streaming reply by itself and a reader who scrolled
                    // up keeps their place. Do not follow the end instead by moving the view when its
                    // content height changes: a message is measured only after its layouts have run, so
                    // each move creates messages at a guessed height, they grow, the height changes again,
                    // and a long reply made the view rebuild its delegates without end, in one polish pass.
                    verticalLayoutDirection: ListView.BottomToTop
                    model: App.chat.messagesNewestFirst
                    clip: true
                    spacing: 4
                    boundsBehavior: Flickable.StopAtBounds
                    ScrollBar.vertical: ScrollBar {}
                    // A sent message or another chat: show the newest message (once, after the layout).
                    onCountChanged: Qt.callLater(messageList.positionViewAtBeginning)

                    delegate: ChatMessageDelegate {
                        isLast: index === 0
                        highlighted: messageId === App.chat.highlightedMessageId
                        busy: App.chat.generating || App.chat.comparing
                        canCompare: page.canSend
                        canScore: App.chat.rewardModelName.length > 0
                        rewardModelName: App.chat.rewardModelName
                        rewardScore: App.chat.rewardScores[String(messageId)] ?? ({})
                        onScoreRequested: id => App.chat.scoreMessage(id)
                        onCopyRequested: text => page.copyText(text)
                        onEditSubmitted: (id, text) => App.chat.editMessage(id, text)
                        onRegenerateRequested: id => App.chat.regenerate(id)
                        onContinueRequested: id => App.chat.continueReply(id)
                        onCompareRequested: id => App.chat.compareReply(id)
                        onSiblingRequested: (id, delta) => App.chat.switchSibling(id, delta)
                        onDeleteRequested: id => App.chat.deleteMessage(id)
                        onInspectRequested: id => { if (App.chat.inspectMessage(id)) page.goToInspectRequested() }
                        onExpandRequested: (id, expanded) => App.chat.setMessageExpanded(id, expanded)
                    }
                }

                // Empty state.
                ColumnLayout {
                    objectName: "chatEmptyState"
                    visible: messageList.count === 0
                    anchors.centerIn: parent
                    width: Math.min(parent.width - 40, 460)
                    spacing: Style.gap
                    Icon {
                        iconName: "chat"
                        color: Style.accent
                        sourceSize.width: 40
                        sourceSize.height: 40
                        Layout.alignment: Qt.AlignHCenter
                    }
                    Label {
                        text: App.hasModel ? qsTr("Chat with %1").arg(App.modelName) : qsTr("No model is loaded")
                        font.pixelSize: Style.fontSection + 3
                        font.weight: Font.DemiBold
                        color: Style.text
                        horizontalAlignment: Text.AlignHCenter
                        Layout.fillWidth: true
                    }
                    Label {
                        text: App.hasModel && !App.modelHasTokenizer ? qsTr("This model has no tokenizer, so it cannot chat.")
                              : App.hasModel ? qsTr("Replies are formatted with the model's chat template and saved as they are written. Edit any message to branch; switch branches with the ‹ › arrows.")
                              : qsTr("Open a model on the Models page (Ctrl+O) to start chatting. Your saved chats are on the left.")
                        wrapMode: Text.Wrap
                        color: Style.textMuted
                        horizontalAlignment: Text.AlignHCenter
                        Layout.fillWidth: true
                    }
                }
            }

            ComparePanel {
                id: comparePanel
                visible: App.chat.comparing
                Layout.fillWidth: true
                Layout.maximumWidth: 1100
                Layout.alignment: Qt.AlignHCenter
                // The conversation above keeps some room; the replies scroll inside their boxes.
                Layout.preferredHeight: Math.min(implicitHeight, page.height * 0.62)
            }

            ChatComposer {
                id: composer
                // While comparing, the panel's buttons are the next step; sending would answer neither reply.
                visible: !App.chat.comparing
                canSend: page.canSend
                generating: App.chat.generating
                hint: page.canSend || App.chat.generating ? qsTr("Message %1…").arg(App.modelName)
                                                          : App.generating ? qsTr("The Playground is generating…")
                                                          : qsTr("Open a model to chat")
                onSendRequested: text => page.send(text)
                onStopRequested: App.chat.stop()
                Layout.fillWidth: true
                Layout.maximumWidth: 920
                Layout.alignment: Qt.AlignHCenter
            }
        }
    }
}
