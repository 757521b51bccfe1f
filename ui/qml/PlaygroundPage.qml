// PlaygroundPage: raw completion. The model continues the prompt exactly as typed, with every
// sampler setting; the output is shown token by token, coloured by probability, and any token can
// be swapped for one of its alternatives to see where the text would have gone. Compare A/B runs
// the same prompt and seed with two settings panels, one after the other, side by side.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page
    objectName: "page_playground"

    readonly property bool canGenerate: App.hasModel && App.modelHasTokenizer && !App.loading && !App.generating
    property alias promptText: promptArea.text
    property alias compare: compareSwitch.checked
    property alias tokensA: tokensA
    property alias tokensB: tokensB
    // What the outputs were generated from: a forced alternative continues from these, not from
    // whatever was typed since.
    property string runPrompt
    property var runSettings: ({ A: null, B: null })
    property bool pendingB: false
    readonly property int maxPromptChips: 1000
    property var stats: ({ A: "", B: "" })
    property var errors: ({ A: "", B: "" })

    TokenStreamModel { id: tokensA }
    TokenStreamModel { id: tokensB }

    function modelFor(lane) { return lane === "B" ? tokensB : tokensA }
    function setStat(lane, text, error) {
        let s = Object.assign({}, stats); s[lane] = text; stats = s
        let e = Object.assign({}, errors); e[lane] = error; errors = e
    }
    function start(lane, settings) {
        modelFor(lane).clear()
        setStat(lane, "", "")
        let r = Object.assign({}, runSettings); r[lane] = settings; runSettings = r
        App.generateWith(runPrompt, settings, lane)
    }

    function generate() {
        if (!canGenerate) return
        runPrompt = promptArea.text
        const a = settingsA.values()
        if (!compare) {
            start("A", a)
            return
        }
        // Same seed on both sides, so only the settings differ.
        const seed = a.seed >= 0 ? a.seed : Math.floor(Math.random() * 2147483647)
        a.seed = seed
        const b = settingsB.values()
        b.seed = seed
        tokensB.clear()
        setStat("B", "", "")
        let r = Object.assign({}, runSettings); r.B = b; runSettings = r
        pendingB = true
        start("A", a)
    }
    function stop() {
        pendingB = false
        App.stopGeneration()
    }
    // Swap the token at `row` for its alternative and continue from there with the same settings.
    function forceAlternative(lane, row, altIndex) {
        if (App.generating || !runSettings[lane]) return
        const m = modelFor(lane)
        if (!m.forceAlternative(row, altIndex)) return
        setStat(lane, "", "")
        App.continueWith(runPrompt, m.ids(), runSettings[lane], lane)
    }

    Connections {
        target: App
        function onTokensArrived(lane, tokens) { page.modelFor(lane).append(tokens) }
        function onGenerationDone(lane, s, error) {
            page.setStat(lane, error.length > 0 ? "" : qsTr("%1 tokens · %2 tok/s · first token %3 ms · seed %4 · %5")
                .arg(s.generatedTokens).arg(Number(s.tokensPerSecond).toFixed(1))
                .arg(Number(s.timeToFirstTokenMs).toFixed(0)).arg(s.seed).arg(s.finishReason), error)
            if (lane === "A" && page.pendingB) {
                page.pendingB = false
                if (error.length === 0 && s.finishReason !== "cancelled") {
                    page.modelFor("B").clear()
                    App.generateWith(page.runPrompt, page.runSettings.B, "B")
                }
            }
        }
        function onModelChanged() { tokenizeTimer.restart() }
    }

    Timer {
        id: tokenizeTimer
        interval: 250  // live, but not on every keystroke
        onTriggered: App.tokenizePrompt(promptArea.text)
    }

    Shortcut {
        sequences: ["Ctrl+Return", "Ctrl+Enter"]
        enabled: page.visible
        onActivated: page.generate()
    }
    Shortcut {
        sequence: "Escape"
        enabled: page.visible && (App.generating || page.pendingB)
        onActivated: page.stop()
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
                            onTextChanged: tokenizeTimer.restart()
                        }
                    }
                    ScrollView {
                        id: promptChips
                        objectName: "promptTokens"
                        visible: App.promptTokens.length > 0 && promptArea.text.length > 0
                        clip: true
                        contentWidth: availableWidth
                        Layout.fillWidth: true
                        Layout.preferredHeight: Math.min(chipFlow.implicitHeight, 64)
                        Flow {
                            id: chipFlow
                            width: promptChips.availableWidth
                            spacing: 3
                            Repeater {
                                // A chip per token gets slow for book-length prompts; the count below is exact.
                                model: App.promptTokens.slice(0, page.maxPromptChips)
                                delegate: Rectangle {
                                    required property var modelData
                                    width: chipRow.implicitWidth + 8
                                    height: chipRow.implicitHeight + 2
                                    radius: 3
                                    color: Style.accentSoft
                                    RowLayout {
                                        id: chipRow
                                        anchors.centerIn: parent
                                        spacing: 3
                                        Label {
                                            text: modelData.text.replace(/\n/g, "↵").replace(/ /g, "␣")
                                            color: Style.text
                                            font.family: Style.monoFont
                                            font.pixelSize: Style.fontSmall
                                            Layout.alignment: Qt.AlignBaseline
                                        }
                                        Label {
                                            text: modelData.id
                                            color: Style.textFaint
                                            font.pixelSize: 10
                                            Layout.alignment: Qt.AlignBaseline
                                        }
                                    }
                                }
                            }
                        }
                    }
                    Label {
                        visible: promptChips.visible
                        text: App.promptTokens.length > page.maxPromptChips
                              ? qsTr("%1 prompt tokens (first %2 shown)").arg(App.promptTokens.length).arg(page.maxPromptChips)
                              : qsTr("%n prompt token(s)", "", App.promptTokens.length)
                        color: Style.textFaint
                        font.pixelSize: 11
                    }
                }

                Card {
                    title: qsTr("Completion")
                    subtitle: qsTr("Hover a token for its probability; click it to continue from an alternative.")
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    Layout.preferredHeight: 3
                    padding: 16

                    ProbabilityLegend { Layout.fillWidth: true }

                    RowLayout {
                        spacing: Style.gapLarge
                        Layout.fillWidth: true
                        Layout.fillHeight: true

                        Repeater {
                            model: page.compare ? ["A", "B"] : ["A"]
                            delegate: ColumnLayout {
                                required property string modelData
                                readonly property string lane: modelData
                                spacing: Style.gap
                                Layout.fillWidth: true
                                Layout.fillHeight: true
                                Layout.preferredWidth: 1
                                Label {
                                    visible: page.compare
                                    text: qsTr("Settings %1").arg(lane)
                                    font.weight: Font.DemiBold
                                    color: Style.accent
                                }
                                TokenView {
                                    objectName: "outputTokens" + lane
                                    tokens: page.modelFor(lane)
                                    interactive: !App.generating
                                    placeholder: App.generating && App.generationLane === lane ? qsTr("Waiting for the first token…")
                                                 : page.pendingB && lane === "B" ? qsTr("Runs after A…")
                                                 : qsTr("The completion appears here as it is generated.")
                                    Layout.fillWidth: true
                                    Layout.fillHeight: true
                                    onAlternativeChosen: (row, altIndex) => page.forceAlternative(lane, row, altIndex)
                                }
                                Label {
                                    objectName: "generationStats" + lane
                                    text: page.errors[lane].length > 0 ? page.errors[lane] : page.stats[lane]
                                    visible: text.length > 0
                                    color: page.errors[lane].length > 0 ? Style.error : Style.textMuted
                                    font.pixelSize: Style.fontSmall
                                    wrapMode: Text.Wrap
                                    Layout.fillWidth: true
                                }
                            }
                        }
                    }
                }
            }

            Card {
                title: qsTr("Sampling")
                Layout.preferredWidth: 300
                Layout.fillHeight: true
                padding: 16

                RowLayout {
                    Layout.fillWidth: true
                    Label {
                        text: qsTr("Compare A/B")
                        color: Style.text
                        Layout.fillWidth: true
                    }
                    Switch {
                        id: compareSwitch
                        objectName: "compareSwitch"
                        ToolTip.visible: hovered
                        ToolTip.delay: 500
                        ToolTip.text: qsTr("Runs the same prompt and seed with two settings, one after the other, side by side.")
                    }
                    // Chat mode (chat templates) comes with the chat work; raw completion only here.
                }
                TabBar {
                    id: panelTabs
                    visible: page.compare
                    Layout.fillWidth: true
                    background: Item {}  // the card is the surface; a filled bar looked like a second card
                    TabButton { text: qsTr("A") }
                    TabButton { text: qsTr("B") }
                }
                ScrollView {
                    id: settingsScroll
                    clip: true
                    contentWidth: availableWidth
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    StackLayout {
                        width: settingsScroll.availableWidth - 12
                        currentIndex: page.compare ? panelTabs.currentIndex : 0
                        SamplerSettings { id: settingsA }
                        SamplerSettings { id: settingsB }
                    }
                }

                Button {
                    objectName: "generateButton"
                    visible: !App.generating
                    text: page.compare ? qsTr("Generate A and B") : qsTr("Generate")
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
                    onClicked: page.stop()
                }
                Button {
                    text: qsTr("Clear")
                    flat: true
                    enabled: !App.generating && (tokensA.count > 0 || tokensB.count > 0)
                    Layout.fillWidth: true
                    onClicked: {
                        tokensA.clear(); tokensB.clear()
                        page.setStat("A", "", ""); page.setStat("B", "", "")
                        App.clearGeneration()
                    }
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
