// Qt Quick Test of the Chat page around a reply being written (replies go to the runner's
// FakeEngine): the send button turns into a stop button that stops it, Esc stops it too, and a
// deleted message comes back with the banner's Undo or Ctrl+Z; a reply scored by a reward model shows its
// score beside it, and a comparison shows both replies' scores and the one preferred.
import QtCore
import QtQuick
import QtTest
import Workbench.Ui
import Workbench.Test

Item {
    width: 1000
    height: 700

    ChatPage {
        id: chatPage
        anchors.fill: parent
    }

    TestCase {
        name: "ChatPage"
        when: windowShown

        function init() {
            if (App.chat.generating) FakeEngine.finish("")
            verify(App.chat.newChat() !== 0)
            chatPage.forceActiveFocus()
        }

        // Every visible item named `name` under `item`.
        function visibleNamed(item, name) {
            let found = []
            for (let i = 0; i < item.children.length; ++i) {
                const child = item.children[i]
                if (child.objectName === name && child.visible) found.push(child)
                found = found.concat(visibleNamed(child, name))
            }
            return found
        }
        function test_scoreBadgeBesideAReply() {
            verify(App.chat.send("Score my answer"))
            FakeEngine.finish("An answer.")
            const list = findChild(chatPage, "messageList")
            compare(visibleNamed(list, "action_score").length, 0)  // no reward model: no Score action
            FakeEngine.useRewardModel("tiny-rm")
            // One Score action, on the reply.
            tryVerify(() => visibleNamed(list, "action_score").length === 1)
            const requests = FakeEngine.scoreRequests
            waitForRendering(list)  // the view has moved to the newest message
            const action = visibleNamed(list, "action_score")[0]
            mouseClick(action)
            compare(FakeEngine.scoreRequests, requests + 1)
            tryVerify(() => visibleNamed(list, "rewardBadge").length === 1)
            const badge = visibleNamed(list, "rewardBadge")[0]
            compare(badge.label, "scoring…")
            FakeEngine.answerScore(0.75)
            tryCompare(badge, "label", "+0.75")
            compare(findChild(badge, "rewardBadgeText").text, "+0.75")
            // Ctrl+Shift+R scores the last reply: scored already, nothing is asked.
            keyClick(Qt.Key_R, Qt.ControlModifier | Qt.ShiftModifier)
            compare(FakeEngine.scoreRequests, requests + 1)
            // A new reply has no score until asked; the shortcut asks.
            verify(App.chat.send("And this one?"))
            FakeEngine.finish("Another answer.")
            keyClick(Qt.Key_R, Qt.ControlModifier | Qt.ShiftModifier)
            compare(FakeEngine.scoreRequests, requests + 2)
            FakeEngine.answerScore(-0.5)
            tryVerify(() => visibleNamed(list, "rewardBadge").length === 2)
            FakeEngine.useRewardModel("")
            tryVerify(() => visibleNamed(list, "rewardBadge").length === 0)
        }
        function test_compareShowsBothScores() {
            verify(App.chat.send("Which is better?"))
            FakeEngine.finish("The first reply.")
            FakeEngine.useRewardModel("tiny-rm")
            const requests = FakeEngine.scoreRequests
            verify(App.chat.compareLastReply())
            compare(FakeEngine.scoreRequests, requests + 1)  // A at once
            FakeEngine.answerScore(0.1)
            FakeEngine.finish("The second reply.")
            compare(FakeEngine.scoreRequests, requests + 2)  // B once written
            FakeEngine.answerScore(0.9)
            const panel = findChild(chatPage, "comparePanel")
            verify(panel.visible)
            const a = findChild(panel, "compareScoreA")
            const b = findChild(panel, "compareScoreB")
            tryCompare(a, "label", "+0.10")
            compare(b.label, "+0.90")
            verify(a.visible && b.visible)
            verify(b.best && !a.best)
            const verdict = findChild(panel, "compareRewardVerdict")
            verify(verdict.visible)
            verify(verdict.text.indexOf("prefers B") >= 0)
            App.chat.dismissComparison()
            FakeEngine.useRewardModel("")
        }
        function test_stopButtonAppearsWhileAReplyIsWrittenAndStopsIt() {
            verify(findChild(chatPage, "sendButton"))
            verify(!findChild(chatPage, "stopButton"))
            const requests = FakeEngine.requests
            verify(App.chat.send("Tell me a story"))
            compare(FakeEngine.requests, requests + 1)
            verify(App.chat.generating)
            const stop = findChild(chatPage, "stopButton")
            verify(stop)
            verify(stop.visible && stop.enabled)
            const stops = FakeEngine.stops
            mouseClick(stop)
            compare(FakeEngine.stops, stops + 1)
            verify(!App.chat.generating)
            verify(findChild(chatPage, "sendButton"))
            verify(!findChild(chatPage, "stopButton"))
        }
        function test_escapeStops() {
            verify(App.chat.send("Another story"))
            const stops = FakeEngine.stops
            keyClick(Qt.Key_Escape)
            compare(FakeEngine.stops, stops + 1)
            verify(!App.chat.generating)
            keyClick(Qt.Key_Escape)  // nothing to stop: nothing is asked
            compare(FakeEngine.stops, stops + 1)
        }
        function test_deletedMessageComesBackWithUndo() {
            verify(App.chat.send("Keep this question"))
            FakeEngine.finish("And this answer.")
            compare(App.chat.messages.count, 2)
            const banner = findChild(chatPage, "undoBanner")
            verify(!banner.visible)
            // The question and the reply below it go; the banner says so and Undo brings them back.
            // The view lists the newest message first: the question is the last of its items.
            const messageList = findChild(chatPage, "messageList")
            // A message sent adds its rows; the view makes their items when it next lays out.
            tryVerify(() => messageList.itemAtIndex(1) !== null)
            App.chat.deleteMessage(messageList.itemAtIndex(1).messageId)
            compare(App.chat.messages.count, 0)
            verify(banner.visible)
            compare(findChild(chatPage, "undoText").text, App.chat.undoText)
            compare(App.chat.undoText, "Deleted a message and the one below it.")
            mouseClick(findChild(chatPage, "undoDeleteButton"))
            compare(App.chat.messages.count, 2)
            verify(!banner.visible)
            // Ctrl+Z does the same.
            App.chat.deleteMessage(messageList.itemAtIndex(0).messageId)
            compare(App.chat.messages.count, 1)
            chatPage.forceActiveFocus()
            keySequence(StandardKey.Undo)
            compare(App.chat.messages.count, 2)
            verify(!banner.visible)
        }
        // A reply much taller than the view, then another message (a chat whose first reply filled the
        // context): the page stays put with the newest message at the bottom and a bounded number of
        // delegates, instead of rebuilding them without end.
        function test_longReplyThenAnotherMessage() {
            const messageList = findChild(chatPage, "messageList")
            verify(App.chat.send("Tell me a story about a fox."))
            let story = ""
            for (let i = 0; i < 200; ++i) story += "The fox ran to the big tree and saw a bird. "
            FakeEngine.finish(story, "context_full")
            verify(App.chat.send("And then?"))
            verify(App.chat.generating)
            for (let i = 0; i < 40; ++i) {
                App.chat.handleText("And then the fox went home. ")
                wait(10)
            }
            FakeEngine.finish("", "eos")
            wait(200)
            compare(messageList.count, 4)
            verify(messageList.contentHeight > messageList.height)
            // The newest message is at the bottom edge of the view.
            const newest = messageList.itemAtIndex(0)
            verify(newest)
            const bottom = newest.mapToItem(messageList, 0, newest.height).y
            fuzzyCompare(bottom, messageList.height, 2)
            // Items: the visible messages and their parts, not a growing pile.
            let delegates = 0
            for (let i = 0; i < messageList.count; ++i) if (messageList.itemAtIndex(i)) ++delegates
            verify(delegates <= 4)
            const height = messageList.contentHeight
            wait(200)
            compare(messageList.contentHeight, height)
        }
        function test_exportProposesAFileAndEnterSaves() {
            verify(App.chat.send("Export me: please"))
            FakeEngine.finish("Done.")
            chatPage.startExport(App.chat.currentChatId, "md")
            const dialog = findChild(chatPage, "chatExportDialog")
            tryVerify(() => dialog.opened)
            const field = findChild(chatPage, "exportPathField")
            verify(field.activeFocus)
            // The chat's title as the name (":" is not for file names), in a folder, as Markdown.
            verify(field.text.endsWith("/Export me- please.md"), field.text)
            compare(field.selectedText, "Export me- please")
            const folder = chatPage.localPath(StandardPaths.writableLocation(StandardPaths.TempLocation))
            const path = folder + "/wb-chat-export-" + Date.now() + ".md"
            field.text = path
            keyClick(Qt.Key_Return)
            tryVerify(() => !dialog.visible)
            compare(chatPage.fileMessage, "Exported to " + path)
        }
        function test_searchSnippetHighlightsTheMatch() {
            verify(App.chat.send("Hello"))  // the chat's title: a message hit, not a title hit
            FakeEngine.finish("Hi.")
            verify(App.chat.send("We heard a big drum <b>and</b> a bell"))
            FakeEngine.finish("Nice.")
            App.chat.searchText = "drum"
            let snippet = null
            tryVerify(() => (snippet = findChild(chatPage, "searchSnippet")) !== null && snippet.visible)
            // The match in bold, the message's own markup shown as text, no bracket marks.
            verify(snippet.text.indexOf(">drum</font></b>") >= 0, snippet.text)
            verify(snippet.text.indexOf("&lt;b&gt;and&lt;/b&gt;") >= 0, snippet.text)
            verify(snippet.text.indexOf("[") < 0, snippet.text)
            App.chat.searchText = ""
        }
    }
}
