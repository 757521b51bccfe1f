// Qt Quick Test of the Chat page around a reply being written (replies go to the runner's
// FakeEngine): the send button turns into a stop button that stops it, Esc stops it too, and a
// deleted message comes back with the banner's Undo or Ctrl+Z.
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
            const messageList = findChild(chatPage, "messageList")
            App.chat.deleteMessage(messageList.itemAtIndex(0).messageId)
            compare(App.chat.messages.count, 0)
            verify(banner.visible)
            compare(findChild(chatPage, "undoText").text, App.chat.undoText)
            compare(App.chat.undoText, "Deleted a message and the one below it.")
            mouseClick(findChild(chatPage, "undoDeleteButton"))
            compare(App.chat.messages.count, 2)
            verify(!banner.visible)
            // Ctrl+Z does the same.
            App.chat.deleteMessage(messageList.itemAtIndex(1).messageId)
            compare(App.chat.messages.count, 1)
            chatPage.forceActiveFocus()
            keySequence(StandardKey.Undo)
            compare(App.chat.messages.count, 2)
            verify(!banner.visible)
        }
    }
}
