// Qt Quick Test of the chat input: Enter sends, Shift+Enter is a new line, blank text and a
// missing model send nothing, and the send button becomes the stop button while a reply is written.
import QtQuick
import QtTest
import Workbench.Ui

Item {
    width: 640
    height: 200

    ChatComposer {
        id: composer
        width: 560
        canSend: true
        generating: false
        hint: "Message"
    }
    SignalSpy { id: sendSpy; target: composer; signalName: "sendRequested" }
    SignalSpy { id: stopSpy; target: composer; signalName: "stopRequested" }

    TestCase {
        name: "ChatComposer"
        when: windowShown

        function init() {
            composer.generating = false
            composer.canSend = true
            composer.text = ""
            sendSpy.clear()
            stopSpy.clear()
            composer.focusInput()
        }
        function type(text) {
            for (let i = 0; i < text.length; ++i) keyClick(text[i])
        }

        function test_enterSends() {
            type("hi")
            keyClick(Qt.Key_Return)
            compare(sendSpy.count, 1)
            compare(sendSpy.signalArguments[0][0], "hi")
            compare(composer.text, "")  // cleared for the next message
        }
        function test_shiftEnterIsANewLine() {
            type("a")
            keyClick(Qt.Key_Return, Qt.ShiftModifier)
            type("b")
            compare(sendSpy.count, 0)
            compare(composer.text, "a\nb")
            keyClick(Qt.Key_Enter)  // the keypad's Enter sends too
            compare(sendSpy.count, 1)
            compare(sendSpy.signalArguments[0][0], "a\nb")
        }
        function test_blankIsNotSent() {
            type("   ")
            keyClick(Qt.Key_Return)
            compare(sendSpy.count, 0)
        }
        function test_nothingIsSentWithoutAModel() {
            composer.canSend = false
            type("hello")
            keyClick(Qt.Key_Return)
            compare(sendSpy.count, 0)
            compare(composer.text, "hello")  // kept for when a model is there
            verify(!findChild(composer, "sendButton").enabled)
        }
        function test_sendButtonFollowsTheText() {
            const button = findChild(composer, "sendButton")
            verify(button)
            verify(!button.enabled)
            composer.text = "x"
            verify(button.enabled)
            mouseClick(button)
            compare(sendSpy.count, 1)
        }
        function test_stopButtonWhileGenerating() {
            composer.generating = true
            const stop = findChild(composer, "stopButton")
            verify(stop)
            verify(stop.enabled)  // even with no text
            type("next question")
            keyClick(Qt.Key_Return)
            compare(sendSpy.count, 0)  // no second message while a reply is written
            mouseClick(stop)
            compare(stopSpy.count, 1)
            composer.generating = false
            verify(findChild(composer, "sendButton"))
            verify(!findChild(composer, "stopButton"))
        }
    }
}
