// ChatSidebar: the list of chats: new chat, full-text search, a folder filter, a tag filter, and per
// chat rename, folder, tags, export and delete (with undo on the page). A search hit opens its chat
// at the matching message. At its foot, the reward model that scores replies (RewardModelButton).
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    id: sidebar

    signal importRequested()
    signal exportRequested(var chatId, string format)

    color: Style.surfaceAlt
    implicitWidth: 268

    // A search snippet as styled text: its own text escaped, the matched words (between the store's
    // marks U+E000 and U+E001, see SearchHit) in bold and the accent colour.
    function highlightedSnippet(snippet) {
        const escaped = snippet.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
        return escaped.replace(/\uE000/g, "<b><font color=\"" + Style.accent + "\">").replace(/\uE001/g, "</font></b>")
    }
    function startRename(chatId, title) {
        renameDialog.chatId = chatId
        renameDialog.field = "title"
        renameField.text = title
        renameDialog.title = qsTr("Rename chat")
        renameDialog.open()
    }
    function startFolder(chatId, folder) {
        renameDialog.chatId = chatId
        renameDialog.field = "folder"
        renameField.text = folder
        renameDialog.title = qsTr("Move to folder (empty: none)")
        renameDialog.open()
    }
    function startTags(chatId, tags) {
        renameDialog.chatId = chatId
        renameDialog.field = "tags"
        renameField.text = tags.join(", ")
        renameDialog.title = qsTr("Tags, separated by commas")
        renameDialog.open()
    }

    // One menu for all rows, told which chat it is for as it opens: a Menu and its items in every row
    // made each row costly to create, and the rows are made again as the list changes and scrolls.
    function openRowMenu(row) {
        rowMenu.chatId = row.chatId
        rowMenu.chatTitle = row.title
        rowMenu.folder = row.folder
        rowMenu.tags = row.tags
        rowMenu.popup()
    }
    Menu {
        id: rowMenu
        objectName: "chatRowMenu"
        property var chatId: 0
        property string chatTitle
        property string folder
        property var tags: []
        MenuItem { text: qsTr("Rename…"); onTriggered: sidebar.startRename(rowMenu.chatId, rowMenu.chatTitle) }
        MenuItem { text: qsTr("Move to folder…"); onTriggered: sidebar.startFolder(rowMenu.chatId, rowMenu.folder) }
        MenuItem { text: qsTr("Tags…"); onTriggered: sidebar.startTags(rowMenu.chatId, rowMenu.tags) }
        MenuSeparator {}
        MenuItem { text: qsTr("Export as Markdown…"); onTriggered: sidebar.exportRequested(rowMenu.chatId, "md") }
        MenuItem { text: qsTr("Export as JSON (OpenAI messages)…"); onTriggered: sidebar.exportRequested(rowMenu.chatId, "json") }
        MenuSeparator {}
        MenuItem { text: qsTr("Delete"); onTriggered: App.chat.deleteChat(rowMenu.chatId) }
    }

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
        spacing: Style.gap

        Button {
            objectName: "newChatButton"
            text: qsTr("New chat")
            icon.source: "icons/plus.svg"
            icon.width: 18
            icon.height: 18
            icon.color: Style.dark ? Style.window : "white"
            flat: true
            // Drawn here rather than by Material's raised style, whose shadow the software renderer drops.
            Material.foreground: Style.dark ? Style.window : "white"
            background: Rectangle {
                radius: 8
                color: parent.down ? Qt.darker(Style.accent, 1.15) : parent.hovered ? Qt.lighter(Style.accent, 1.08) : Style.accent
            }
            implicitHeight: 42
            Layout.fillWidth: true
            onClicked: App.chat.newChat()
            ToolTip.visible: hovered
            ToolTip.delay: 600
            ToolTip.text: qsTr("New chat (Ctrl+N)")
        }

        TextField {
            id: searchField
            objectName: "chatSearchField"
            placeholderText: qsTr("Search all chats")
            leftPadding: 34
            selectByMouse: true
            Layout.fillWidth: true
            onTextChanged: searchTimer.restart()
            Icon {
                iconName: "search"
                color: Style.textMuted
                sourceSize.width: 16
                sourceSize.height: 16
                anchors.left: parent.left
                anchors.leftMargin: 10
                anchors.verticalCenter: parent.verticalCenter
            }
            Timer {
                id: searchTimer
                interval: 180
                onTriggered: App.chat.searchText = searchField.text
            }
            Keys.onEscapePressed: text = ""
        }

        ComboBox {
            objectName: "folderFilter"
            visible: App.chat.folders.length > 0
            model: [qsTr("All chats")].concat(Array.from(App.chat.folders))
            Layout.fillWidth: true
            onActivated: index => App.chat.folderFilter = index === 0 ? "" : App.chat.folders[index - 1]
        }

        // One chip per tag: choosing one lists only the chats that carry it; choosing it again, or the
        // ✕, lists all chats again. Hidden while searching (a search covers every chat).
        Flow {
            objectName: "tagFilter"
            visible: App.chat.tags.length > 0 && App.chat.searchText.length === 0
            spacing: Style.gapSmall
            Layout.fillWidth: true
            Repeater {
                model: App.chat.tags
                delegate: AbstractButton {
                    id: chip
                    required property string modelData
                    readonly property bool chosen: App.chat.tagFilter === modelData
                    objectName: "tagChip_" + modelData
                    implicitWidth: Math.min(chipLabel.implicitWidth + 20, 200)
                    implicitHeight: 26
                    onClicked: App.chat.tagFilter = chosen ? "" : modelData
                    ToolTip.visible: hovered
                    ToolTip.delay: 600
                    ToolTip.text: chosen ? qsTr("Show all chats") : qsTr("Show only chats tagged #%1").arg(modelData)
                    background: Rectangle {
                        radius: height / 2
                        color: chip.chosen ? Style.accent : chip.hovered ? Style.accentSoft : "transparent"
                        border.color: chip.chosen ? Style.accent : Style.border
                    }
                    contentItem: Label {
                        id: chipLabel
                        text: "#" + chip.modelData
                        color: chip.chosen ? (Style.dark ? Style.window : "white") : Style.accent
                        font.pixelSize: Style.fontSmall
                        elide: Text.ElideRight
                        horizontalAlignment: Text.AlignHCenter
                        verticalAlignment: Text.AlignVCenter
                    }
                }
            }
            ToolButton {
                objectName: "clearTagFilter"
                visible: App.chat.tagFilter.length > 0
                icon.source: "icons/close.svg"
                icon.width: 14
                icon.height: 14
                icon.color: Style.textMuted
                implicitWidth: 26
                implicitHeight: 26
                padding: 0
                onClicked: App.chat.tagFilter = ""
                ToolTip.visible: hovered
                ToolTip.delay: 600
                ToolTip.text: qsTr("Clear the tag filter")
            }
        }

        ListView {
            id: list
            objectName: "chatList"
            model: App.chat.chats
            clip: true
            spacing: 2
            boundsBehavior: Flickable.StopAtBounds
            Layout.fillWidth: true
            Layout.fillHeight: true
            ScrollBar.vertical: ScrollBar {}

            delegate: ItemDelegate {
                id: row
                required property var chatId
                required property string title
                required property string folder
                required property var tags
                required property string updated
                required property string snippet
                required property var messageId  // a search hit's message; 0 otherwise
                readonly property bool current: chatId === App.chat.currentChatId

                width: ListView.view.width
                highlighted: current
                padding: 10
                topPadding: 8
                bottomPadding: 8
                onClicked: messageId ? App.chat.openSearchHit(chatId, messageId) : App.chat.selectChat(chatId)
                onDoubleClicked: sidebar.startRename(chatId, title)
                background: Rectangle {
                    radius: 8
                    color: row.current ? Style.accentSoft : row.hovered ? (Style.dark ? "#262a31" : "#eceef3") : "transparent"
                }
                TapHandler {
                    acceptedButtons: Qt.RightButton
                    onTapped: sidebar.openRowMenu(row)
                }
                contentItem: RowLayout {
                    spacing: 6
                    ColumnLayout {
                        spacing: 2
                        Layout.fillWidth: true
                        RowLayout {
                            Layout.fillWidth: true
                            Label {
                                text: row.title
                                font.weight: row.current ? Font.DemiBold : Font.Normal
                                color: Style.text
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                            Label {
                                text: row.updated
                                color: Style.textFaint
                                font.pixelSize: Style.fontSmall - 1
                            }
                        }
                        Label {
                            objectName: "searchSnippet"
                            visible: row.snippet.length > 0
                            text: sidebar.highlightedSnippet(row.snippet)
                            textFormat: Text.StyledText
                            color: Style.textMuted
                            font.pixelSize: Style.fontSmall
                            elide: Text.ElideRight
                            maximumLineCount: 2
                            wrapMode: Text.Wrap
                            Layout.fillWidth: true
                        }
                        Label {
                            visible: row.folder.length > 0 || row.tags.length > 0
                            text: (row.folder.length > 0 ? "▸ " + row.folder : "") + (row.tags.length > 0 ? (row.folder.length > 0 ? "  " : "") + Array.from(row.tags).map(t => "#" + t).join(" ") : "")
                            color: Style.accent
                            font.pixelSize: Style.fontSmall - 1
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                    }
                    ToolButton {
                        objectName: "chatMenuButton"
                        icon.source: "icons/more.svg"
                        icon.width: 16
                        icon.height: 16
                        icon.color: Style.textMuted
                        implicitWidth: 26
                        implicitHeight: 26
                        padding: 0
                        opacity: row.hovered || row.current ? 1 : 0
                        onClicked: sidebar.openRowMenu(row)
                    }
                }
            }

            Label {
                anchors.centerIn: parent
                width: parent.width - 24
                visible: list.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                color: Style.textMuted
                text: App.chat.searchText.length > 0 ? qsTr("No chat contains “%1”.").arg(App.chat.searchText)
                      : App.chat.tagFilter.length > 0 ? qsTr("No chat is tagged #%1.").arg(App.chat.tagFilter)
                      : qsTr("No chats yet. Type below to start one.")
            }
        }

        // The reward model that scores replies (the chat's Score action and Compare).
        RewardModelButton {
            Layout.fillWidth: true
        }

        Button {
            objectName: "importChatButton"
            text: qsTr("Import JSON…")
            icon.source: "icons/upload.svg"
            icon.width: 16
            icon.height: 16
            flat: true
            Layout.fillWidth: true
            onClicked: sidebar.importRequested()
        }
    }

    Dialog {
        id: renameDialog
        objectName: "chatRenameDialog"
        property var chatId: 0
        property string field: "title"
        anchors.centerIn: Overlay.overlay
        modal: true
        width: 380
        standardButtons: Dialog.Ok | Dialog.Cancel
        TextField {
            id: renameField
            width: parent.width
            selectByMouse: true
            onAccepted: renameDialog.accept()
        }
        onOpened: renameField.forceActiveFocus()
        onAccepted: {
            if (field === "title") App.chat.renameChat(chatId, renameField.text)
            else if (field === "folder") App.chat.setChatFolder(chatId, renameField.text)
            else App.chat.setChatTags(chatId, renameField.text)
        }
    }
}
