// Qt Quick Test of long messages on the Chat page (replies go to the runner's FakeEngine): a long
// question and a long reply show collapsed, a bounded height with "Show all (N characters)"; a click or
// the keyboard shows all of the text and "Show less" collapses it again; Copy copies the whole text
// whether collapsed or not; a long reply being written shows its end.
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
    // Where the test pastes what Copy put on the clipboard.
    TextEdit { id: pasted; visible: false }

    TestCase {
        name: "ChatLongMessage"
        when: windowShown

        function longText(words, tag) {
            const pool = ["the", "boat", "sailed", "at", "dawn", "and", "a", "story", "about", "a", "quetzal"]
            let out = []
            for (let i = 0; i < words; ++i) out.push(i % 97 === 96 ? "\n" : pool[i % pool.length])
            return out.join(" ") + " " + tag
        }
        // The message's delegate (the view lists the newest first), scrolled into view.
        function delegateFor(row) {
            const list = findChild(chatPage, "messageList")
            const index = list.count - 1 - row
            list.positionViewAtIndex(index, 2 /* ListView.Contain */)
            waitForRendering(list)
            return list.itemAtIndex(index)
        }
        function shownReplyText(delegate) {
            let parts = []
            const collect = item => {
                for (let i = 0; i < item.children.length; ++i) {
                    const child = item.children[i]
                    if (child.objectName === "markdownText") parts.push(child.getText(0, child.length))
                    collect(child)
                }
            }
            collect(delegate)
            return parts.join("\n")
        }
        function clipboardText() {
            pasted.text = ""
            pasted.paste()
            return pasted.text
        }

        function init() {
            if (App.chat.generating) FakeEngine.finish("")
            verify(App.chat.newChat() !== 0)
        }

        function test_longQuestionCollapsedThenExpanded() {
            const question = longText(3000, "END-OF-QUESTION")
            verify(question.length > 12000)
            verify(App.chat.send(question))
            FakeEngine.finish("Short answer.")
            const item = delegateFor(0)
            verify(item)
            const text = findChild(item, "userText")
            const button = findChild(item, "expandButton")
            verify(button.visible)
            compare(button.text, "Show all (" + question.length.toLocaleString(Qt.locale(), 'f', 0) + " characters)")
            // Collapsed: the beginning, a bounded height; the end is not laid out.
            verify(text.text.length <= 1600, text.text.length)
            verify(question.startsWith(text.text.replace(/ …$/, "")))
            verify(text.text.indexOf("END-OF-QUESTION") < 0)
            verify(item.height < 700, item.height)
            const collapsedHeight = item.height
            // Copy: the whole question, not what is shown.
            mouseClick(findChild(item, "action_copy"))
            compare(clipboardText().replace(/\r\n/g, "\n"), question)
            // Show all: the whole text.
            mouseClick(button)
            tryCompare(text, "text", question)
            compare(button.text, "Show less")
            tryVerify(() => item.height > 3 * collapsedHeight)
            // Show less: collapsed again, by the keyboard this time (the button takes focus, Space presses it).
            button.forceActiveFocus()
            keyClick(Qt.Key_Space)
            tryVerify(() => text.text.length <= 1600)
            verify(button.text.startsWith("Show all"))
            // Enter expands as well.
            button.forceActiveFocus()
            keyClick(Qt.Key_Return)
            tryCompare(text, "text", question)
        }

        function test_longReplyShowsItsEndWhileWrittenAndCollapsesWhenDone() {
            verify(App.chat.send("Tell me a long story"))
            const story = longText(2500, "THE-END")
            App.chat.handleText(story)
            let item = delegateFor(1)
            verify(item)
            // While it is written: its end, and no Show all needed to follow it.
            tryVerify(() => shownReplyText(item).indexOf("THE-END") >= 0)
            verify(shownReplyText(item).length <= 1600)
            verify(findChild(item, "longMessageNote").visible)
            FakeEngine.finish("")
            item = delegateFor(1)
            tryVerify(() => shownReplyText(item).indexOf("THE-END") < 0)
            const shown = shownReplyText(item)
            verify(shown.length > 500 && shown.length <= 1600, shown.length)
            verify(item.height < 700, item.height)
            verify(!findChild(item, "longMessageNote").visible)
            // Copy takes the whole reply.
            mouseClick(findChild(item, "action_copy"))
            compare(clipboardText().replace(/\r\n/g, "\n"), story)
            // Expanded: every word of it is shown (Markdown drops the line breaks' spaces, so compare words).
            mouseClick(findChild(item, "expandButton"))
            tryVerify(() => shownReplyText(item).indexOf("THE-END") >= 0)
            compare(shownReplyText(item).split(/\s+/).filter(w => w.length > 0).length,
                    story.split(/\s+/).filter(w => w.length > 0).length)
        }

        // A long code block cut short stays a code block, and its own Copy button copies all of it.
        function test_collapsedCodeBlockCopiesAllOfIt() {
            verify(App.chat.send("Print hello many times"))
            let lines = []
            for (let i = 0; i < 400; ++i) lines.push("print('hello " + i + "')")
            const code = lines.join("\n")
            FakeEngine.finish("Here:\n\n```python\n" + code + "\n```\n\nDone.")
            const item = delegateFor(1)
            const copy = findChild(item, "codeCopyButton")
            verify(copy)
            verify(findChild(item, "expandButton").visible)
            verify(item.height < 900, item.height)
            copy.clicked()  // the block's top may be scrolled out of the view: the button's own click
            compare(clipboardText().replace(/\r\n/g, "\n"), code)
        }

        function test_shortMessagesHaveNoButton() {
            verify(App.chat.send("A short question"))
            FakeEngine.finish("A short answer.")
            for (let row = 0; row < 2; ++row) {
                const item = delegateFor(row)
                verify(!findChild(item, "longMessageBar").visible)
            }
        }
    }
}
