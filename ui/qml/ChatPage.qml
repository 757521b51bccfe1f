// ChatPage: multi-turn chat with the loaded model (later issue); for now it says what it will be.
import QtQuick
import Workbench.Ui

PlaceholderPage {
    objectName: "page_chat"
    title: qsTr("Chat")
    summary: qsTr("Conversations with the loaded model, saved as you go, with edit, regenerate and branch.")
    iconName: "chat"
    plans: [qsTr("Chat templates, system prompts and sampling presets"),
            qsTr("Live tokens per second and context use for every reply"),
            qsTr("Search, export to Markdown or JSON, and turn chats into training data")]
}
