// PlaygroundPage: raw completion and chat. In Raw mode the model continues the prompt exactly as
// typed; in Chat mode a system prompt and a few messages are rendered with the model's chat template
// (special tokens only from its markup, as the Chat page does) and the model writes the next reply.
// Either way every sampler setting applies, the output is shown token by token, coloured by
// probability, and any token can be swapped for one of its alternatives to see where the text would
// have gone. Compare A/B runs the same prompt and seed with two settings panels, one after the
// other, side by side.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page
    objectName: "page_playground"

    readonly property bool canGenerate: App.hasModel && App.modelHasTokenizer && !App.loading && !App.generating
                                        && (!chatMode || hasUserMessage)
    property alias promptText: promptArea.text
    // Chat mode: the conversation below is rendered with the model's chat template.
    property bool chatMode: false
    onChatModeChanged: {
        tokenizeTimer.restart()
        // The output belongs to the mode that made it: a raw completion is no reply to the conversation.
        if (!App.generating && !pendingB && runChat !== chatMode) clearOutput()
    }
    readonly property string templateText: App.chatTemplateNote.length > 0
        ? qsTr("Template: %1. %2").arg(App.chatTemplateName).arg(App.chatTemplateNote)
        : App.chatTemplateName === "plain"
        ? qsTr("Template: plain (the model names none): “role: content” lines, no special tokens.")
        : qsTr("Template: %1, the model's own. Its markup alone makes special tokens.").arg(App.chatTemplateName)
    property alias systemText: systemArea.text
    readonly property bool hasUserMessage: {
        // ListModel.get() is not a binding dependency; turnEdited() bumps turnVersion instead.
        if (turnVersion < 0) return false
        for (let i = 0; i < chatTurns.count; ++i)
            if (chatTurns.get(i).role === "user" && chatTurns.get(i).content.trim().length > 0) return true
        return false
    }
    property int turnVersion: 0  // bumped on every edit of chatTurns, for the bindings that read it
    property alias compare: compareSwitch.checked
    property alias tokensA: tokensA
    property alias tokensB: tokensB
    // What the outputs were generated from: a forced alternative continues from these, not from
    // whatever was typed since.
    property string runPrompt
    property var runTurns: []
    property bool runChat: false
    property var runSettings: ({ A: null, B: null })
    property bool pendingB: false
    readonly property int maxPromptChips: 1000
    // App.promptTokens as one JS array per tokenization (reading the C++ list converts all of it).
    readonly property var promptTokens: App.promptTokens
    property var stats: ({ A: "", B: "" })
    property var errors: ({ A: "", B: "" })

    // One prompt token as a chip: its text (spaces and line breaks made visible) and its id. A control
    // token (only ever from the chat template's markup) stands out. The chips' Repeaters count tokens
    // and each chip reads its own: a new tokenization (each pause in typing) changes the chips' texts
    // and adds or removes chips at the end, instead of re-creating up to a thousand chips from a fresh
    // array.
    component PromptChip: Rectangle {
        property var token: ({ text: "", id: "", special: false })
        width: chipRow.implicitWidth + 8
        height: chipRow.implicitHeight + 2
        radius: 3
        color: token.special ? Style.findSoft : Style.accentSoft
        border.color: token.special ? Style.findBorder : "transparent"
        RowLayout {
            id: chipRow
            anchors.centerIn: parent
            spacing: 3
            Label {
                text: token.text.replace(/\n/g, "↵").replace(/ /g, "␣")
                color: Style.text
                font.family: Style.monoFont
                font.pixelSize: Style.fontSmall
                Layout.alignment: Qt.AlignBaseline
            }
            Label {
                text: token.id
                color: Style.textFaint
                font.pixelSize: 10
                Layout.alignment: Qt.AlignBaseline
            }
        }
    }

    // Each takes in its lane's token records straight from the App (typed, in C++).
    TokenStreamModel { id: tokensA; source: App; lane: "A" }
    TokenStreamModel { id: tokensB; source: App; lane: "B" }
    ListModel {
        id: chatTurns
        ListElement { role: "user"; content: "" }
    }

    // The conversation as App.generateChatWith takes it: the system prompt first, when there is one.
    function turns() {
        const out = []
        if (systemArea.text.trim().length > 0) out.push({ role: "system", content: systemArea.text })
        for (let i = 0; i < chatTurns.count; ++i) out.push({ role: chatTurns.get(i).role, content: chatTurns.get(i).content })
        return out
    }
    // Replaces the conversation: `messages` as [{role, content}] ("user" or "assistant").
    function setChat(system, messages) {
        systemArea.text = system
        chatTurns.clear()
        for (const m of messages) chatTurns.append({ role: m.role, content: m.content })
        if (chatTurns.count === 0) chatTurns.append({ role: "user", content: "" })
        turnEdited()
    }
    function addTurn() {
        const last = chatTurns.count > 0 ? chatTurns.get(chatTurns.count - 1).role : "assistant"
        chatTurns.append({ role: last === "user" ? "assistant" : "user", content: "" })
        turnEdited()
    }
    function turnEdited() {
        ++turnVersion
        tokenizeTimer.restart()
    }
    function request(lane, settings) {
        if (runChat) App.generateChatWith(runTurns, settings, lane)
        else App.generateWith(runPrompt, settings, lane)
    }

    function modelFor(lane) { return lane === "B" ? tokensB : tokensA }
    function setStat(lane, text, error) {
        let s = Object.assign({}, stats); s[lane] = text; stats = s
        let e = Object.assign({}, errors); e[lane] = error; errors = e
    }
    function start(lane, settings) {
        modelFor(lane).clear()
        setStat(lane, "", "")
        let r = Object.assign({}, runSettings); r[lane] = settings; runSettings = r
        request(lane, settings)
    }

    function generate() {
        if (!canGenerate) return
        runChat = chatMode
        runPrompt = promptArea.text
        runTurns = turns()
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
    function clearOutput() {
        tokensA.clear(); tokensB.clear()
        setStat("A", "", ""); setStat("B", "", "")
        App.clearGeneration()
    }
    // The lane's output as plain text on the clipboard (the chips' text, without ids or colours).
    function copyText(lane) {
        clipboardHelper.text = modelFor(lane).text
        clipboardHelper.selectAll()
        clipboardHelper.copy()
        clipboardHelper.text = ""
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
        if (runChat) App.continueChatWith(runTurns, m.ids(), runSettings[lane], lane)
        else App.continueWith(runPrompt, m.ids(), runSettings[lane], lane)
    }

    Connections {
        target: App
        function onGenerationDone(lane, s, error) {
            page.setStat(lane, error.length > 0 ? "" : qsTr("%1 tokens · %2 tok/s · first token %3 ms · seed %4 · %5")
                .arg(s.generatedTokens).arg(Number(s.tokensPerSecond).toFixed(1))
                .arg(Number(s.timeToFirstTokenMs).toFixed(0)).arg(s.seed).arg(s.finishReason), error)
            if (lane === "A" && page.pendingB) {
                page.pendingB = false
                if (error.length === 0 && s.finishReason !== "cancelled") {
                    page.modelFor("B").clear()
                    page.request("B", page.runSettings.B)
                }
            }
        }
        function onModelChanged() { tokenizeTimer.restart() }
    }

    // QML has no clipboard API; a text edit's copy() is the way to it.
    TextEdit { id: clipboardHelper; visible: false }

    Timer {
        id: tokenizeTimer
        interval: 250  // live, but not on every keystroke
        onTriggered: page.chatMode ? App.tokenizeChat(page.turns()) : App.tokenizePrompt(promptArea.text)
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
            subtitle: page.chatMode ? qsTr("Chat: your messages are written with the model's chat template, as the Chat page sends them.")
                                    : qsTr("Raw completion: the model continues your text exactly as written.")
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
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    // Fixed: a Layout.preferredHeight that changes with the mode crashes Qt 6.4's
                    // layouts here (seen in test_ui_smoke), so the editor is kept compact instead.
                    Layout.preferredHeight: 2
                    padding: 16

                    // The card's title with the Raw / Chat switch beside it: one row, to leave the
                    // conversation as much height as it can get.
                    RowLayout {
                        spacing: Style.gapLarge
                        Layout.fillWidth: true
                        Label {
                            objectName: "promptCardTitle"
                            text: page.chatMode ? qsTr("Conversation") : qsTr("Prompt")
                            font.pixelSize: Style.fontSection
                            font.weight: Font.DemiBold
                            color: Style.text
                            Layout.fillWidth: true
                        }
                        TabBar {
                            id: modeTabs
                            objectName: "playgroundMode"
                            currentIndex: page.chatMode ? 1 : 0
                            onCurrentIndexChanged: page.chatMode = currentIndex === 1
                            contentHeight: 34
                            background: Item {}
                            TabButton {
                                objectName: "rawModeTab"
                                text: qsTr("Raw completion")
                                width: implicitWidth
                            }
                            TabButton {
                                objectName: "chatModeTab"
                                text: qsTr("Chat")
                                width: implicitWidth
                            }
                        }
                    }

                    // The raw prompt or the conversation: one of the two is shown.
                    ScrollView {
                        visible: !page.chatMode
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
                        id: chatScroll
                        objectName: "chatEditor"
                        visible: page.chatMode
                        contentWidth: availableWidth
                        clip: true
                        ScrollBar.vertical.policy: contentHeight > availableHeight + 1 ? ScrollBar.AlwaysOn : ScrollBar.AsNeeded
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        ColumnLayout {
                            width: chatScroll.availableWidth - chatScroll.ScrollBar.vertical.width - 8
                            spacing: Style.gapSmall

                            Label {
                                objectName: "chatTemplateLabel"
                                text: App.hasModel ? page.templateText : ""
                                visible: text.length > 0
                                color: Style.textMuted
                                font.pixelSize: Style.fontSmall
                                wrapMode: Text.Wrap
                                Layout.fillWidth: true
                                Layout.bottomMargin: Style.gapSmall
                            }
                            RowLayout {
                                spacing: Style.gap
                                Layout.fillWidth: true
                                Label {
                                    text: qsTr("System")
                                    color: Style.textMuted
                                    font.weight: Font.DemiBold
                                    Layout.preferredWidth: 104
                                    Layout.alignment: Qt.AlignTop
                                    Layout.topMargin: 8
                                    leftPadding: 12
                                }
                                TextArea {
                                    id: systemArea
                                    objectName: "systemArea"
                                    topPadding: 6
                                    bottomPadding: 6
                                    placeholderText: qsTr("Optional: instructions the model reads first")
                                    wrapMode: TextArea.Wrap
                                    selectByMouse: true
                                    Layout.fillWidth: true
                                    onTextChanged: page.turnEdited()
                                }
                                Item { implicitWidth: 30 }
                            }
                            Repeater {
                                model: chatTurns
                                delegate: RowLayout {
                                    id: turnRow
                                    required property int index
                                    required property string role
                                    required property string content
                                    spacing: Style.gap
                                    Layout.fillWidth: true
                                    ComboBox {
                                        objectName: "turnRole" + turnRow.index
                                        model: [qsTr("User"), qsTr("Assistant")]
                                        currentIndex: turnRow.role === "assistant" ? 1 : 0
                                        flat: true
                                        implicitHeight: 38
                                        Layout.preferredWidth: 104
                                        Layout.alignment: Qt.AlignTop
                                        onActivated: index => {
                                            chatTurns.setProperty(turnRow.index, "role", index === 1 ? "assistant" : "user")
                                            page.turnEdited()
                                        }
                                    }
                                    TextArea {
                                        objectName: "turnText" + turnRow.index
                                        topPadding: 6
                                        bottomPadding: 6
                                        placeholderText: turnRow.role === "user" ? qsTr("A message from the user") : qsTr("An earlier reply of the model")
                                        wrapMode: TextArea.Wrap
                                        selectByMouse: true
                                        Layout.fillWidth: true
                                        Component.onCompleted: text = turnRow.content
                                        onTextChanged: {
                                            if (text === turnRow.content) return
                                            chatTurns.setProperty(turnRow.index, "content", text)
                                            page.turnEdited()
                                        }
                                    }
                                    ToolButton {
                                        icon.source: "icons/trash.svg"
                                        icon.width: 16
                                        icon.height: 16
                                        icon.color: Style.textMuted
                                        enabled: chatTurns.count > 1
                                        implicitWidth: 30
                                        Layout.alignment: Qt.AlignTop
                                        onClicked: {
                                            chatTurns.remove(turnRow.index)
                                            page.turnEdited()
                                        }
                                    }
                                }
                            }
                            Button {
                                objectName: "addTurnButton"
                                text: qsTr("Add message")
                                icon.source: "icons/plus.svg"
                                icon.width: 16
                                icon.height: 16
                                flat: true
                                onClicked: page.addTurn()
                            }
                            // The whole chat as the model reads it: the template's text around each message.
                            Label {
                                visible: chatChips.visible
                                text: qsTr("As the model reads it")
                                color: Style.textMuted
                                font.pixelSize: Style.fontSmall
                                Layout.topMargin: Style.gap
                            }
                            Flow {
                                id: chatChips
                                objectName: "chatPromptTokens"
                                visible: page.chatMode && App.promptTokens.length > 0 && page.hasUserMessage
                                spacing: 3
                                Layout.fillWidth: true
                                Repeater {
                                    // The chips' own condition, not `visible`: that turns false whenever the page is hidden.
                                    model: page.chatMode && page.hasUserMessage ? Math.min(page.promptTokens.length, page.maxPromptChips) : 0
                                    delegate: PromptChip {
                                        required property int index
                                        token: page.promptTokens[index] ?? ({ text: "", id: "", special: false })
                                    }
                                }
                            }
                        }
                    }
                    ScrollView {
                        id: promptChips
                        objectName: "promptTokens"
                        visible: App.promptTokens.length > 0 && !page.chatMode && promptArea.text.length > 0
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
                                model: !page.chatMode && promptArea.text.length > 0 ? Math.min(page.promptTokens.length, page.maxPromptChips) : 0
                                delegate: PromptChip {
                                    required property int index
                                    token: page.promptTokens[index] ?? ({ text: "", id: "", special: false })
                                }
                            }
                        }
                    }
                    Label {
                        objectName: "promptTokenCount"
                        visible: App.promptTokens.length > 0 && (page.chatMode ? page.hasUserMessage : promptArea.text.length > 0)
                        text: App.promptTokens.length > page.maxPromptChips
                              ? qsTr("%1 prompt tokens (first %2 shown)").arg(App.promptTokens.length).arg(page.maxPromptChips)
                              : qsTr("%n prompt token(s)", "", App.promptTokens.length)
                        color: Style.textFaint
                        font.pixelSize: 11
                    }
                }

                Card {
                    title: page.chatMode ? qsTr("Reply") : qsTr("Completion")
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
                                RowLayout {
                                    spacing: Style.gapSmall
                                    visible: statsLabel.visible || copyButton.visible
                                    Layout.fillWidth: true
                                    Label {
                                        id: statsLabel
                                        objectName: "generationStats" + lane
                                        visible: text.length > 0
                                        text: page.errors[lane].length > 0 ? page.errors[lane] : page.stats[lane]
                                        color: page.errors[lane].length > 0 ? Style.error : Style.textMuted
                                        font.pixelSize: Style.fontSmall
                                        wrapMode: Text.Wrap
                                        Layout.fillWidth: true
                                    }
                                    Item { Layout.fillWidth: true; visible: !statsLabel.visible }
                                    Button {
                                        id: copyButton
                                        objectName: "copyText" + lane
                                        readonly property TokenStreamModel laneTokens: page.modelFor(lane)
                                        text: qsTr("Copy as plain text")
                                        icon.source: "icons/copy.svg"
                                        icon.width: 16
                                        icon.height: 16
                                        flat: true
                                        font.pixelSize: Style.fontSmall
                                        visible: laneTokens.count > 0
                                        enabled: !(App.generating && App.generationLane === lane)
                                        onClicked: page.copyText(lane)
                                    }
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
                }
                TabBar {
                    id: panelTabs
                    visible: page.compare
                    Layout.fillWidth: true
                    background: Item {}  // the card is the surface; a filled bar looked like a second card
                    TabButton { text: qsTr("A") }
                    TabButton { text: qsTr("B") }
                }
                // The knobs are taller than most windows: the scroll bar stays visible while there is more
                // below, in a gutter of its own (the sliders' handles reach 6 px past their column).
                ScrollView {
                    id: settingsScroll
                    objectName: "settingsScroll"
                    readonly property bool overflows: contentHeight > availableHeight + 1
                    clip: true
                    contentWidth: availableWidth
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    Layout.rightMargin: -10  // the gutter takes part of the card's padding
                    ScrollBar.vertical.policy: overflows ? ScrollBar.AlwaysOn : ScrollBar.AsNeeded
                    StackLayout {
                        width: settingsScroll.availableWidth - settingsScroll.ScrollBar.vertical.width - 12
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
                    onClicked: page.clearOutput()
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
