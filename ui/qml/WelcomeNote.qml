// WelcomeNote: the first-run note above the pages while the starter model is loaded. It says what
// that model is (a tiny chat model that knows only its own small generated world) so that its answers
// in Chat do not read as a broken app, and where to go next. Closed once, it stays closed
// (AppSettings.welcomeDismissed).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Rectangle {
    id: note
    objectName: "welcomeNote"

    // Asks the window to show a page by its key ("chat", "playground", "inspect", "train").
    signal pageRequested(string key)

    visible: App.modelIsStarter && !App.settings.welcomeDismissed
    color: Style.infoSoft
    border.color: Style.infoBorder
    radius: Style.radius - 2
    implicitHeight: column.implicitHeight + 24

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 8
        anchors.topMargin: 12
        anchors.bottomMargin: 12
        spacing: Style.gapSmall

        RowLayout {
            spacing: Style.gap
            Layout.fillWidth: true
            Icon { iconName: "info"; color: Style.accent; Layout.alignment: Qt.AlignTop }
            ColumnLayout {
                spacing: Style.gapSmall
                Layout.fillWidth: true
                Label {
                    objectName: "welcomeText"
                    text: qsTr("<b>Welcome.</b> The model loaded now is the <b>starter model</b>: a toy chat model "
                               + "(%1 parameters) trained on this kind of machine by our own pipeline, pretraining then "
                               + "chat fine-tuning. It knows only its own small world: ask it \"Where does Mia live?\", "
                               + "\"Tell me about Leo.\" or \"What is 27 + 45?\"; anything else gets a polite refusal. "
                               + "Try the Playground (see each token's probability), Inspect (attention and the logit "
                               + "lens), Models (what it was trained on and its scores) and Train (fine-tune it on your "
                               + "own text or chats).")
                          .arg(note.parameterText())
                    textFormat: Text.StyledText
                    color: Style.text
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                Flow {
                    spacing: Style.gapSmall
                    Layout.fillWidth: true
                    Repeater {
                        model: [
                            { key: "playground", text: qsTr("Playground") },
                            { key: "chat", text: qsTr("Chat") },
                            { key: "inspect", text: qsTr("Inspect") },
                            { key: "models", text: qsTr("Models") },
                            { key: "train", text: qsTr("Train") }
                        ]
                        delegate: Button {
                            required property var modelData
                            objectName: "welcomeGo_" + modelData.key
                            text: modelData.text
                            icon.source: "icons/" + modelData.key + ".svg"
                            icon.width: 16
                            icon.height: 16
                            flat: true
                            font.pixelSize: Style.fontSmall
                            implicitHeight: 34
                            onClicked: note.pageRequested(modelData.key)
                        }
                    }
                }
            }
            ToolButton {
                objectName: "welcomeDismiss"
                icon.source: "icons/close.svg"
                icon.width: 16
                icon.height: 16
                icon.color: Style.textMuted
                Layout.alignment: Qt.AlignTop
                onClicked: App.settings.welcomeDismissed = true
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Close this note for good")
            }
        }
    }

    // The parameter count from the model's details, as the Models page shows it.
    function parameterText() {
        for (const row of App.modelDetails)
            if (row.label === qsTr("Parameters")) return row.value.split(" (")[0]
        return "?"
    }
}
