// ChatMessageDelegate: one message of the chat: a bubble for the user, a full-width Markdown reply
// (code blocks boxed, with a copy button) for the assistant; under it the reply's stats and the
// actions (copy, edit, regenerate, continue, compare, score) and the ‹ n/m › arrows between alternative
// branches. A reply scored by the chosen reward model shows its score as a badge beside the stats.
// A long message (longmessage.h) shows its beginning and "Show all"; a long reply being written, its
// end. Laying out tens of thousands of characters stalls the window; copy and edit use the whole text.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: root

    required property int index
    required property var messageId
    required property string role
    required property string content
    required property bool complete
    required property bool streaming
    required property string statsText
    required property string settingsText
    required property int siblingIndex
    required property int siblingCount
    required property var blocks
    required property string shownText  // the content, or the part of a long message shown
    required property string cut        // "", "head" (collapsed) or "tail" (being written)
    required property bool collapsible  // long enough to be cut: a "Show all" or "Show less" button
    required property int length

    property bool isLast: false
    property bool busy: false      // a reply is being generated somewhere
    property bool editing: false
    property bool highlighted: false  // the search hit the chat was opened for
    property bool canCompare: false   // a model is loaded that could write a second reply
    property bool canScore: false     // a reward model is chosen and ready
    property string rewardModelName
    property var rewardScore: ({})    // this message's entry of App.chat.rewardScores, {} when none
    readonly property bool isUser: role === "user"
    readonly property var actionIcons: ({ copy: "copy", edit: "edit", regenerate: "reload", continue: "continue",
                                          compare: "compare", score: "sparkle", inspect: "inspect", delete: "trash" })

    signal copyRequested(string text)
    signal editSubmitted(var messageId, string text)
    signal regenerateRequested(var messageId)
    signal continueRequested(var messageId)
    signal compareRequested(var messageId)
    signal scoreRequested(var messageId)
    signal siblingRequested(var messageId, int delta)
    signal deleteRequested(var messageId)
    signal inspectRequested(var messageId)
    signal expandRequested(var messageId, bool expanded)

    implicitHeight: column.implicitHeight + 10
    width: ListView.view ? ListView.view.width : 600

    HoverHandler { id: hover }

    Rectangle {
        objectName: "searchHighlight"
        visible: root.highlighted
        anchors.fill: parent
        anchors.topMargin: 2
        radius: Style.radius
        color: Style.findSoft
        border.color: Style.findBorder
    }

    ColumnLayout {
        id: column
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.top: parent.top
        anchors.topMargin: 6
        spacing: 6

        RowLayout {
            spacing: Style.gap
            Layout.fillWidth: true
            layoutDirection: root.isUser ? Qt.RightToLeft : Qt.LeftToRight
            Rectangle {
                implicitWidth: 26
                implicitHeight: 26
                radius: 13
                color: root.isUser ? Style.accentSoft : (Style.dark ? "#2b3a33" : "#e3f2e8")
                Label {
                    anchors.centerIn: parent
                    text: root.isUser ? qsTr("You").charAt(0) : "AI"
                    font.pixelSize: 10
                    font.weight: Font.DemiBold
                    color: root.isUser ? Style.accent : Style.good
                }
            }
            Label {
                text: root.isUser ? qsTr("You") : root.role === "system" ? qsTr("System") : qsTr("Assistant")
                font.weight: Font.DemiBold
                color: Style.text
            }
            Label {
                visible: root.streaming
                text: qsTr("writing…")
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
            }
            Label {
                objectName: "incompleteLabel"
                visible: !root.complete && !root.streaming && !root.isUser
                text: qsTr("incomplete")
                color: Style.warn
                font.pixelSize: Style.fontSmall
            }
            Item { Layout.fillWidth: true }
        }

        // The message itself (or its editor).
        Rectangle {
            id: bubble
            visible: !root.editing
            color: root.isUser ? Style.accentSoft : "transparent"
            radius: 12
            Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft
            Layout.leftMargin: root.isUser ? 80 : 34
            Layout.rightMargin: root.isUser ? 34 : 16
            Layout.fillWidth: !root.isUser
            Layout.maximumWidth: root.width - 114
            implicitWidth: root.isUser ? Math.min(userText.implicitWidth + 28, root.width - 114) : 400
            implicitHeight: root.isUser ? userText.implicitHeight + 20 : blocksColumn.implicitHeight

            TextEdit {
                id: userText
                objectName: "userText"
                visible: root.isUser
                anchors.fill: parent
                anchors.margins: 10
                anchors.leftMargin: 14
                anchors.rightMargin: 14
                text: root.cut === "head" ? root.shownText + " …" : root.shownText
                readOnly: true
                selectByMouse: true
                wrapMode: TextEdit.Wrap
                color: Style.text
                selectionColor: Style.accent
                font.pixelSize: Style.fontBody + 1
            }

            ColumnLayout {
                id: blocksColumn
                visible: !root.isUser
                anchors.left: parent.left
                anchors.right: parent.right
                spacing: 10
                // One item per block, by position: a streaming reply changes the text of its last block
                // and now and then adds one, so the items stay and only their text changes (a model of
                // the blocks themselves would rebuild every item, text layout and all, for each piece).
                Repeater {
                    model: root.isUser ? 0 : root.blocks.length
                    delegate: Loader {
                        id: blockLoader
                        required property int index
                        readonly property var block: root.blocks[index] ?? ({ kind: "text", text: "", language: "" })
                        Layout.fillWidth: true
                        sourceComponent: block.kind === "code" ? codeComponent : textComponent
                        Component {
                            id: textComponent
                            TextEdit {
                                objectName: "markdownText"
                                text: blockLoader.block.text
                                textFormat: TextEdit.MarkdownText
                                readOnly: true
                                selectByMouse: true
                                wrapMode: TextEdit.Wrap
                                color: Style.text
                                selectionColor: Style.accent
                                font.pixelSize: Style.fontBody + 1
                                onLinkActivated: link => Qt.openUrlExternally(link)
                            }
                        }
                        Component {
                            id: codeComponent
                            CodeBlock {
                                code: blockLoader.block.text
                                language: blockLoader.block.language
                                // A block cut short (a long message collapsed) copies all of itself.
                                onCopyRequested: text => root.copyRequested(blockLoader.block.whole ?? text)
                            }
                        }
                    }
                }
                Label {
                    visible: root.streaming && root.content.length === 0
                    text: "●  ●  ●"
                    color: Style.textFaint
                    font.pixelSize: Style.fontSmall
                }
            }
        }

        // A long message: how much is shown, and the button for the rest (or for less). A button, so
        // Tab reaches it and Space or Enter presses it.
        RowLayout {
            objectName: "longMessageBar"
            visible: !root.editing && root.collapsible
            spacing: Style.gap
            Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft
            Layout.leftMargin: root.isUser ? 80 : 28
            Layout.rightMargin: root.isUser ? 28 : 16
            layoutDirection: root.isUser ? Qt.RightToLeft : Qt.LeftToRight
            Button {
                id: expandButton
                objectName: "expandButton"
                flat: true
                text: root.cut.length > 0 ? qsTr("Show all (%1 characters)").arg(root.length.toLocaleString(Qt.locale(), 'f', 0))
                                          : qsTr("Show less")
                icon.source: root.cut.length > 0 ? "icons/chevron-down.svg" : "icons/chevron-up.svg"
                icon.width: 16
                icon.height: 16
                onClicked: root.expandRequested(root.messageId, root.cut.length > 0)
                Keys.onReturnPressed: clicked()
                Keys.onEnterPressed: clicked()
            }
            Label {
                objectName: "longMessageNote"
                visible: root.cut === "tail"
                text: qsTr("showing the end while it is written")
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
            }
        }

        // Inline editor: saving makes a new branch; the original stays one arrow away.
        ColumnLayout {
            visible: root.editing
            spacing: Style.gap
            Layout.fillWidth: true
            Layout.leftMargin: 34
            Layout.rightMargin: 16
            Rectangle {
                color: Style.surface
                border.color: Style.accent
                radius: 10
                Layout.fillWidth: true
                implicitHeight: Math.min(editArea.implicitHeight + 16, 320)
                ScrollView {
                    anchors.fill: parent
                    anchors.margins: 4
                    TextArea {
                        id: editArea
                        objectName: "editArea"
                        wrapMode: TextArea.Wrap
                        selectByMouse: true
                        background: null
                        font.pixelSize: Style.fontBody + 1
                        Keys.onEscapePressed: root.editing = false
                    }
                }
            }
            RowLayout {
                spacing: Style.gap
                Label {
                    text: root.isUser ? qsTr("Saving starts a new branch and a new reply.") : qsTr("Saving keeps the original as another branch.")
                    color: Style.textMuted
                    font.pixelSize: Style.fontSmall
                    Layout.fillWidth: true
                }
                Button {
                    text: qsTr("Cancel")
                    flat: true
                    onClicked: root.editing = false
                }
                Button {
                    objectName: "saveEditButton"
                    text: root.isUser ? qsTr("Save and send") : qsTr("Save")
                    highlighted: true
                    enabled: editArea.text.trim().length > 0 && !root.busy
                    onClicked: {
                        root.editing = false
                        root.editSubmitted(root.messageId, editArea.text)
                    }
                }
            }
        }

        // Stats, actions and branch arrows.
        RowLayout {
            visible: !root.editing
            spacing: 2
            Layout.fillWidth: true
            Layout.leftMargin: root.isUser ? 0 : 28
            Layout.rightMargin: root.isUser ? 28 : 0
            layoutDirection: root.isUser ? Qt.RightToLeft : Qt.LeftToRight

            RowLayout {
                objectName: "branchArrows"
                visible: root.siblingCount > 1
                spacing: 0
                ToolButton {
                    objectName: "previousBranch"
                    icon.source: "icons/chevron-left.svg"
                    icon.width: 16
                    icon.height: 16
                    icon.color: Style.textMuted
                    enabled: root.siblingIndex > 0 && !root.busy
                    implicitWidth: 28
                    implicitHeight: 28
                    padding: 0
                    onClicked: root.siblingRequested(root.messageId, -1)
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Previous version")
                }
                Label {
                    objectName: "branchLabel"
                    text: (root.siblingIndex + 1) + " / " + root.siblingCount
                    color: Style.textMuted
                    font.pixelSize: Style.fontSmall
                }
                ToolButton {
                    objectName: "nextBranch"
                    icon.source: "icons/chevron-right.svg"
                    icon.width: 16
                    icon.height: 16
                    icon.color: Style.textMuted
                    enabled: root.siblingIndex < root.siblingCount - 1 && !root.busy
                    implicitWidth: 28
                    implicitHeight: 28
                    padding: 0
                    onClicked: root.siblingRequested(root.messageId, 1)
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Next version")
                }
            }

            Label {
                objectName: "replyStats"
                visible: !root.isUser && root.statsText.length > 0
                text: root.statsText
                color: Style.textFaint
                font.pixelSize: Style.fontSmall
                elide: Text.ElideRight
                // Never wider than its text or half the row, and the first to give way (elided) when the
                // score badge and the actions need the room.
                Layout.fillWidth: true
                Layout.maximumWidth: Math.min(implicitWidth, root.width * 0.55)
                Layout.leftMargin: 6
                Layout.rightMargin: 4
                HoverHandler { id: statsHover }
                ToolTip.visible: statsHover.hovered && root.settingsText.length > 0
                ToolTip.text: qsTr("Sampling: %1").arg(root.settingsText)
            }
            RewardBadge {
                objectName: "rewardBadge"
                visible: !root.isUser && !root.streaming && label.length > 0
                score: root.rewardScore
                modelName: root.rewardModelName
                Layout.leftMargin: root.statsText.length > 0 ? 0 : 6
                Layout.rightMargin: 4
            }
            Row {
                spacing: 0
                opacity: hover.hovered || root.isLast ? 1 : 0
                Behavior on opacity { NumberAnimation { duration: 120 } }
                // A fixed list of actions (a model rebuilt from the message's state would recreate the
                // buttons whenever a reply starts or ends); each button works out whether it shows.
                Repeater {
                    model: ["copy", "edit", "regenerate", "continue", "compare", "score", "inspect", "delete"]
                    delegate: ToolButton {
                        required property string modelData
                        objectName: "action_" + modelData
                        // Continue and Compare are for the last reply only (compare: a finished one).
                        // Score: any finished reply, once a reward model is chosen (it does not change the chat,
                        // so it stays enabled while a reply is written or compared).
                        visible: modelData === "score" ? !root.isUser && !root.streaming && root.canScore
                                 : modelData === "copy" || (!root.streaming && (modelData !== "continue" && modelData !== "compare"
                                                                              || (!root.isUser && root.isLast && (modelData !== "compare" || root.complete))))
                        enabled: modelData === "copy" || modelData === "score"
                                 || (!root.busy && (modelData !== "compare" || root.canCompare))
                        icon.source: "icons/" + root.actionIcons[modelData] + ".svg"
                        icon.width: 16
                        icon.height: 16
                        icon.color: Style.textMuted
                        implicitWidth: 30
                        implicitHeight: 28
                        padding: 0
                        ToolTip.visible: hovered
                        ToolTip.text: modelData === "copy" ? qsTr("Copy")
                                      : modelData === "edit" ? qsTr("Edit (starts a branch)")
                                      : modelData === "regenerate" ? (root.isUser ? qsTr("New reply") : qsTr("Regenerate"))
                                      : modelData === "continue" ? qsTr("Continue this reply")
                                      : modelData === "compare" ? qsTr("Compare: write a second reply with another seed and keep the better one (Ctrl+Shift+C)")
                                      : modelData === "score" ? qsTr("Score with reward model %1 (Ctrl+Shift+R: the last reply)").arg(root.rewardModelName)
                                      : modelData === "inspect" ? qsTr("Inspect: tokens, probabilities and attention of the chat up to here")
                                      : qsTr("Delete this message and the replies below it")
                        onClicked: {
                            if (modelData === "copy") root.copyRequested(root.content)
                            else if (modelData === "edit") { editArea.text = root.content; root.editing = true; editArea.forceActiveFocus() }
                            else if (modelData === "regenerate") root.regenerateRequested(root.messageId)
                            else if (modelData === "delete") root.deleteRequested(root.messageId)
                            else if (modelData === "inspect") root.inspectRequested(root.messageId)
                            else if (modelData === "compare") root.compareRequested(root.messageId)
                            else if (modelData === "score") root.scoreRequested(root.messageId)
                            else root.continueRequested(root.messageId)
                        }
                    }
                }
            }

            Item { Layout.fillWidth: true }
        }
    }
}
