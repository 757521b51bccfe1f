// PlaygroundPage: raw completion. The model continues the prompt exactly as typed, with the few
// sampling settings that matter most, streamed as it generates.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page
    objectName: "page_playground"

    readonly property bool canGenerate: App.hasModel && App.modelHasTokenizer && !App.loading && !App.generating
    property alias promptText: promptArea.text

    function generate() {
        if (canGenerate)
            App.generate(promptArea.text, temperatureSlider.value, maxTokensBox.value, topKBox.value, topPSlider.value)
    }

    Shortcut {
        sequences: ["Ctrl+Return", "Ctrl+Enter"]
        enabled: page.visible
        onActivated: page.generate()
    }
    Shortcut {
        sequence: "Escape"
        enabled: page.visible && App.generating
        onActivated: App.stopGeneration()
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: Style.pagePadding
        spacing: Style.gapLarge + 4

        PageHeader {
            title: qsTr("Playground")
            subtitle: qsTr("Raw completion: the model continues your text exactly as written.")
            Layout.fillWidth: true
        }

        InlineMessage {
            text: !App.hasModel && !App.loading ? qsTr("No model is loaded. Open one on the Models page (Ctrl+O).")
                : App.hasModel && !App.modelHasTokenizer ? qsTr("%1 has no tokenizer, so it cannot read or write text.").arg(App.modelName)
                : ""
            isError: false
            closable: false
            Layout.fillWidth: true
        }

        RowLayout {
            spacing: Style.gapLarge
            Layout.fillWidth: true
            Layout.fillHeight: true

            ColumnLayout {
                spacing: Style.gapLarge
                Layout.fillWidth: true
                Layout.fillHeight: true

                Card {
                    title: qsTr("Prompt")
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    Layout.preferredHeight: 2
                    padding: 16

                    ScrollView {
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        TextArea {
                            id: promptArea
                            objectName: "promptArea"
                            placeholderText: qsTr("Once upon a time, in a small village by the sea,")
                            wrapMode: TextArea.Wrap
                            selectByMouse: true
                            font.pixelSize: Style.fontBody + 1
                            background: null
                        }
                    }
                }

                Card {
                    title: qsTr("Completion")
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    Layout.preferredHeight: 3
                    padding: 16

                    ScrollView {
                        id: outputScroll
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        TextArea {
                            id: outputArea
                            objectName: "outputArea"
                            readOnly: true
                            selectByMouse: true
                            wrapMode: TextArea.Wrap
                            text: App.generatedText
                            placeholderText: App.generating ? qsTr("Waiting for the first token…")
                                                            : qsTr("The completion appears here as it is generated.")
                            font.pixelSize: Style.fontBody + 1
                            background: null
                            // Keep the newest text in view while streaming.
                            onTextChanged: if (App.generating) cursorPosition = length
                        }
                    }
                    Label {
                        objectName: "generationStats"
                        text: App.generationError.length > 0 ? App.generationError : App.generationStats
                        visible: text.length > 0
                        color: App.generationError.length > 0 ? Style.error : Style.textMuted
                        font.pixelSize: Style.fontSmall
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                }
            }

            Card {
                title: qsTr("Sampling")
                Layout.preferredWidth: 280
                Layout.fillHeight: true
                padding: 18

                ParameterSlider {
                    id: temperatureSlider
                    objectName: "temperatureSlider"
                    label: qsTr("Temperature")
                    hint: qsTr("0 always picks the most likely token")
                    from: 0
                    to: 2
                    stepSize: 0.05
                    value: 0.8
                    Layout.fillWidth: true
                }
                ParameterSlider {
                    id: topPSlider
                    label: qsTr("Top-p")
                    hint: qsTr("keep the smallest set with this probability; 1 is off")
                    from: 0.05
                    to: 1
                    stepSize: 0.05
                    value: 0.95
                    Layout.fillWidth: true
                }
                RowLayout {
                    Layout.fillWidth: true
                    Layout.topMargin: 4
                    Label {
                        text: qsTr("Top-k")
                        color: Style.text
                        Layout.fillWidth: true
                    }
                    SpinBox {
                        id: topKBox
                        from: 0
                        to: 1000
                        value: 40
                        editable: true
                        Layout.preferredWidth: 130
                    }
                }
                RowLayout {
                    Layout.fillWidth: true
                    Label {
                        text: qsTr("Max tokens")
                        color: Style.text
                        Layout.fillWidth: true
                    }
                    SpinBox {
                        id: maxTokensBox
                        objectName: "maxTokensBox"
                        from: 1
                        to: Math.max(1, App.modelContextLength > 0 ? App.modelContextLength : 4096)
                        value: 128
                        stepSize: 16
                        editable: true
                        Layout.preferredWidth: 130
                    }
                }

                Item { Layout.fillHeight: true }

                Button {
                    objectName: "generateButton"
                    visible: !App.generating
                    text: qsTr("Generate")
                    icon.source: "icons/play.svg"
                    highlighted: true
                    enabled: page.canGenerate
                    Layout.fillWidth: true
                    onClicked: page.generate()
                }
                Button {
                    objectName: "stopButton"
                    visible: App.generating
                    text: qsTr("Stop")
                    icon.source: "icons/stop.svg"
                    Layout.fillWidth: true
                    onClicked: App.stopGeneration()
                }
                Button {
                    text: qsTr("Clear")
                    flat: true
                    enabled: !App.generating && App.generatedText.length > 0
                    Layout.fillWidth: true
                    onClicked: App.clearGeneration()
                }
                Label {
                    text: qsTr("Ctrl+Enter generates · Esc stops")
                    color: Style.textFaint
                    font.pixelSize: 11
                    horizontalAlignment: Text.AlignHCenter
                    Layout.fillWidth: true
                }
            }
        }
    }
}
