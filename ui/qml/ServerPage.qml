// ServerPage: serve a model to other programs through the OpenAI-compatible API (App.server, ServerService):
// start and stop it, its settings, API keys (shown once, stored hashed), what it is doing, its last requests,
// and examples to copy.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page
    objectName: "page_server"

    readonly property var server: App.server
    readonly property bool stopped: server.state === "stopped"
    // The key just created, shown until dismissed: the only time it exists in the clear.
    property string newKey: ""

    // QML has no clipboard API; a text edit's copy() is the way to it.
    TextEdit { id: clipboardHelper; visible: false }
    function copy(text) {
        clipboardHelper.text = text
        clipboardHelper.selectAll()
        clipboardHelper.copy()
        clipboardHelper.text = ""
    }

    component SettingRow: RowLayout {
        id: settingRow
        property string label
        property string hint
        property int controlWidth: 220
        default property alias control: holder.data
        spacing: Style.gapLarge
        Layout.fillWidth: true
        ColumnLayout {
            spacing: 2
            Layout.fillWidth: true
            Label { text: settingRow.label; color: Style.text }
            Label {
                visible: text.length > 0
                text: settingRow.hint
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }
        Item {
            id: holder
            implicitWidth: settingRow.controlWidth
            implicitHeight: children.length > 0 ? children[0].implicitHeight : 0
            Layout.preferredWidth: settingRow.controlWidth
        }
    }

    component Stat: ColumnLayout {
        id: stat
        property string label
        property string value
        spacing: 0
        Layout.fillWidth: true
        Label {
            objectName: stat.objectName + "Value"
            text: stat.value
            color: Style.text
            font.pixelSize: 20
            font.weight: Font.DemiBold
        }
        Label { text: stat.label; color: Style.textMuted; font.pixelSize: Style.fontSmall }
    }

    FileDialog {
        id: modelFileDialog
        title: qsTr("Model to serve")
        nameFilters: [qsTr("Model files (*.gguf *.safetensors *.bin)"), qsTr("All files (*)")]
        currentFolder: App.dialogFolder
        onAccepted: page.server.modelPath = decodeURIComponent(selectedFile.toString().replace(/^file:\/\//, ""))
    }
    FolderDialog {
        id: modelFolderDialog
        title: qsTr("Model folder to serve")
        currentFolder: App.dialogFolder
        onAccepted: page.server.modelPath = decodeURIComponent(selectedFolder.toString().replace(/^file:\/\//, ""))
    }

    Dialog {
        id: revokeDialog
        objectName: "revokeKeyDialog"
        property var keyId: 0
        property string keyName
        anchors.centerIn: parent
        modal: true
        title: qsTr("Revoke “%1”?").arg(keyName)
        standardButtons: Dialog.Cancel | Dialog.Ok
        Label {
            text: qsTr("Programs using this key are refused from their next request on. This cannot be undone.")
            wrapMode: Text.Wrap
            width: 360
            color: Style.text
        }
        onAccepted: page.server.revokeKey(keyId)
    }

    ScrollView {
        id: scroll
        anchors.fill: parent
        contentWidth: availableWidth
        clip: true

        ColumnLayout {
            width: Math.min(scroll.availableWidth, 900 + 2 * Style.pagePadding)
            spacing: Style.gapLarge + 4

            PageHeader {
                title: qsTr("Server")
                subtitle: qsTr("Serve a model to other programs through an OpenAI-compatible API, as LM Studio's "
                               + "and Ollama's local servers do.")
                Layout.fillWidth: true
                Layout.topMargin: Style.pagePadding
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
            }

            // --- status and start / stop ---
            Card {
                objectName: "serverStatusCard"
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding

                RowLayout {
                    spacing: Style.gapLarge
                    Layout.fillWidth: true
                    Rectangle {
                        radius: 6
                        color: page.server.running ? Style.good : page.stopped ? Style.textFaint : Style.warn
                        Layout.preferredWidth: 12
                        Layout.preferredHeight: 12
                        Layout.alignment: Qt.AlignVCenter
                    }
                    ColumnLayout {
                        spacing: 2
                        Layout.fillWidth: true
                        Layout.minimumWidth: 0
                        Layout.preferredWidth: 100  // the button keeps its room; the labels take the rest
                        Label {
                            objectName: "serverStateLabel"
                            text: page.server.running ? qsTr("Running")
                                : page.server.state === "starting"
                                  ? (page.server.loadProgress > 0 ? qsTr("Starting… loading the model (%1 %)").arg(Math.round(page.server.loadProgress * 100))
                                                                  : qsTr("Starting…"))
                                : page.server.state === "stopping" ? qsTr("Stopping… ending requests in flight")
                                : qsTr("Stopped")
                            color: Style.text
                            font.pixelSize: Style.fontSection + 2
                            font.weight: Font.DemiBold
                        }
                        Label {
                            text: page.server.running
                                  ? qsTr("%1 · %2 slots of %3 tokens · %4").arg(page.server.servedModelName)
                                        .arg(page.server.parallel).arg(page.server.slotCapacity).arg(page.server.servedBackend)
                                  : page.server.modelPath.length > 0
                                    ? qsTr("Will serve %1").arg(page.server.modelPath)
                                    : App.hasModel ? qsTr("Will serve %1, the model loaded in the app").arg(App.modelName)
                                                   : qsTr("Load a model in the app, or choose one below.")
                            color: Style.textMuted
                            elide: Text.ElideMiddle
                            Layout.fillWidth: true
                        }
                    }
                    Button {
                        objectName: "serverStartStopButton"
                        text: page.stopped ? qsTr("Start server") : qsTr("Stop server")
                        icon.source: page.stopped ? "icons/play.svg" : "icons/stop.svg"
                        highlighted: true
                        Layout.alignment: Qt.AlignRight | Qt.AlignVCenter
                        enabled: page.stopped ? page.server.settingsProblem.length === 0 : page.server.state !== "stopping"
                        onClicked: page.stopped ? page.server.start() : page.server.stop()
                        ToolTip.visible: hovered && !enabled && page.stopped
                        ToolTip.text: page.server.settingsProblem
                    }
                }

                // The URL, to copy into a client.
                Rectangle {
                    visible: page.server.running
                    color: Style.surfaceAlt
                    border.color: Style.border
                    radius: 8
                    implicitHeight: urlRow.implicitHeight + 12
                    Layout.fillWidth: true
                    RowLayout {
                        id: urlRow
                        anchors.fill: parent
                        anchors.leftMargin: 12
                        anchors.rightMargin: 4
                        anchors.topMargin: 6
                        anchors.bottomMargin: 6
                        Label { text: qsTr("Base URL"); color: Style.textMuted; font.pixelSize: Style.fontSmall }
                        TextEdit {
                            objectName: "serverUrl"
                            text: page.server.url + "/v1"
                            readOnly: true
                            selectByMouse: true
                            font.family: Style.monoFont
                            color: Style.text
                            selectionColor: Style.accent
                            Layout.fillWidth: true
                        }
                        ToolButton {
                            id: copyUrl
                            property bool copied: false
                            text: copied ? qsTr("Copied") : qsTr("Copy")
                            icon.source: "icons/copy.svg"
                            icon.width: 14
                            icon.height: 14
                            font.pixelSize: Style.fontSmall
                            onClicked: {
                                page.copy(page.server.url + "/v1")
                                copied = true
                                copiedUrlTimer.restart()
                            }
                            Timer { id: copiedUrlTimer; interval: 1500; onTriggered: copyUrl.copied = false }
                        }
                    }
                }

                RowLayout {
                    visible: page.server.running
                    spacing: Style.gapLarge
                    Layout.fillWidth: true
                    Stat {
                        objectName: "statRequests"
                        label: page.server.requestsFailed > 0 ? qsTr("requests (%1 refused or failed)").arg(page.server.requestsFailed)
                                                              : qsTr("requests answered")
                        value: page.server.requestsServed
                    }
                    Stat { objectName: "statActive"; label: qsTr("generating now"); value: page.server.activeRequests }
                    Stat { objectName: "statQueued"; label: qsTr("waiting for a slot"); value: page.server.queuedRequests }
                    Stat {
                        objectName: "statSpeed"
                        label: qsTr("tokens / s, all requests")
                        value: page.server.tokensPerSecond.toFixed(page.server.tokensPerSecond < 10 ? 1 : 0)
                    }
                    Stat { label: qsTr("tokens generated"); value: page.server.generatedTokens }
                }

                Label {
                    objectName: "servedModelStale"
                    visible: page.server.running && page.server.modelPath.length === 0 && App.hasModel
                             && App.modelPath !== page.server.servedModelPath
                    text: qsTr("The app now has %1 loaded; the server keeps serving %2 until you restart it.")
                              .arg(App.modelName).arg(page.server.servedModelName)
                    color: Style.textMuted
                    font.pixelSize: Style.fontSmall
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                InlineMessage {
                    objectName: "serverError"
                    text: page.server.error
                    onCloseRequested: page.server.clearError()
                    Layout.fillWidth: true
                }
                InlineMessage {
                    objectName: "serverExposureWarning"
                    text: page.server.exposureWarning
                    isError: false
                    closable: false
                    Layout.fillWidth: true
                }
                InlineMessage {
                    objectName: "serverNoKeyNote"
                    text: page.server.requireKey && page.server.keys.length === 0
                          ? qsTr("No API key yet: every request will be refused until you create one below.") : ""
                    isError: false
                    closable: false
                    Layout.fillWidth: true
                }
            }

            // --- settings ---
            Card {
                objectName: "serverSettingsCard"
                title: qsTr("Settings")
                subtitle: page.stopped ? qsTr("Saved as you change them; used at the next start.")
                                       : qsTr("Stop the server to change these.")
                enabled: page.stopped
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding

                SettingRow {
                    label: qsTr("Model")
                    hint: qsTr("A copy is loaded for the server, so chatting in the app and switching models "
                               + "there does not disturb its clients.")
                    controlWidth: 320
                    ComboBox {
                        id: modelBox
                        objectName: "serverModelBox"
                        width: 320
                        readonly property var choices: {
                            const list = [{ path: "", name: App.hasModel ? qsTr("Loaded in the app (%1)").arg(App.modelName)
                                                                        : qsTr("Loaded in the app") }]
                            for (const m of App.recentModels)
                                if (m.path !== "") list.push({ path: m.path, name: m.name })
                            if (page.server.modelPath.length > 0 && !list.some(c => c.path === page.server.modelPath))
                                list.push({ path: page.server.modelPath, name: page.server.modelPath.split("/").pop() })
                            list.push({ path: "\u0001file", name: qsTr("Choose a file…") })
                            list.push({ path: "\u0001folder", name: qsTr("Choose a folder…") })
                            return list
                        }
                        model: choices
                        textRole: "name"
                        currentIndex: Math.max(0, choices.findIndex(c => c.path === page.server.modelPath))
                        onActivated: index => {
                            const p = choices[index].path
                            if (p === "\u0001file") { modelFileDialog.open(); currentIndex = Qt.binding(() => Math.max(0, choices.findIndex(c => c.path === page.server.modelPath))) }
                            else if (p === "\u0001folder") { modelFolderDialog.open(); currentIndex = Qt.binding(() => Math.max(0, choices.findIndex(c => c.path === page.server.modelPath))) }
                            else page.server.modelPath = p
                        }
                        ToolTip.visible: hovered && page.server.modelPath.length > 0
                        ToolTip.text: page.server.modelPath
                    }
                }
                SettingRow {
                    label: qsTr("Address")
                    hint: qsTr("127.0.0.1: this computer only. 0.0.0.0: every network this computer is on.")
                    ComboBox {
                        objectName: "serverHostBox"
                        width: 220
                        editable: true
                        model: ["127.0.0.1", "0.0.0.0", "::1"]
                        editText: page.server.host
                        onAccepted: page.server.host = editText
                        onActivated: index => page.server.host = model[index]
                        onActiveFocusChanged: if (!activeFocus && editText !== page.server.host) page.server.host = editText
                    }
                }
                SettingRow {
                    label: qsTr("Port")
                    hint: qsTr("8080 unless another program uses it; the URL above shows the one in use.")
                    SpinBox {
                        objectName: "serverPortBox"
                        width: 220
                        from: 0
                        to: 65535
                        editable: true
                        value: page.server.port
                        // No thousands separator in a port; 0 lets the system pick a free one.
                        textFromValue: (value, locale) => value === 0 ? qsTr("Any free port") : value.toString()
                        valueFromText: (text, locale) => parseInt(text) || 0
                        onValueModified: page.server.port = value
                    }
                }
                SettingRow {
                    label: qsTr("Parallel requests")
                    hint: qsTr("Generated at once, each in its own slot of the KV cache. More slots: more throughput, more memory.")
                    SpinBox {
                        objectName: "serverParallelBox"
                        width: 220
                        from: 1
                        to: 64
                        editable: true
                        value: page.server.parallel
                        onValueModified: page.server.parallel = value
                    }
                }
                SettingRow {
                    label: qsTr("Queue")
                    hint: qsTr("Requests that may wait for a free slot; beyond them a client is told to retry (503).")
                    SpinBox {
                        objectName: "serverQueueBox"
                        width: 220
                        from: 0
                        to: 4096
                        editable: true
                        value: page.server.queueSize
                        onValueModified: page.server.queueSize = value
                    }
                }
                SettingRow {
                    label: qsTr("Context per request")
                    hint: qsTr("Tokens a slot holds, prompt and reply together. The model's own context when left at its default.")
                    SpinBox {
                        objectName: "serverContextBox"
                        width: 220
                        from: 0
                        to: 1048576
                        stepSize: 256
                        editable: true
                        value: page.server.contextTokens
                        textFromValue: (value, locale) => value === 0 ? qsTr("Model's context") : value.toString()
                        valueFromText: (text, locale) => parseInt(text) || 0
                        onValueModified: page.server.contextTokens = value
                    }
                }
                SettingRow {
                    label: qsTr("Require an API key")
                    hint: qsTr("Off is allowed only on 127.0.0.1: then any program on this computer can use the model.")
                    Switch {
                        objectName: "serverRequireKeySwitch"
                        checked: page.server.requireKey
                        onToggled: page.server.requireKey = checked
                    }
                }
                SettingRow {
                    label: qsTr("Other host names")
                    hint: qsTr("Names clients may reach the server by besides its address and localhost, comma-separated "
                               + "(others are refused, against DNS rebinding).")
                    TextField {
                        objectName: "serverAllowedHostsField"
                        width: 220
                        text: page.server.allowedHosts
                        placeholderText: qsTr("e.g. mybox.local")
                        onEditingFinished: page.server.allowedHosts = text
                    }
                }
                InlineMessage {
                    objectName: "serverSettingsProblem"
                    text: page.stopped ? page.server.settingsProblem : ""
                    closable: false
                    Layout.fillWidth: true
                }
                Button {
                    text: qsTr("Restore defaults")
                    flat: true
                    Layout.alignment: Qt.AlignRight
                    onClicked: page.server.resetSettings()
                }
            }

            // --- API keys ---
            Card {
                objectName: "serverKeysCard"
                title: qsTr("API keys")
                subtitle: qsTr("Clients send one as “Authorization: Bearer KEY”. Only a salted hash is kept, so a key "
                               + "is shown once, when it is created.")
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding

                RowLayout {
                    spacing: Style.gap
                    Layout.fillWidth: true
                    TextField {
                        id: keyName
                        objectName: "newKeyName"
                        placeholderText: qsTr("Name, e.g. “notebook on laptop”")
                        Layout.fillWidth: true
                        onAccepted: createKeyButton.clicked()
                    }
                    Button {
                        id: createKeyButton
                        objectName: "createKeyButton"
                        text: qsTr("Create key")
                        icon.source: "icons/plus.svg"
                        onClicked: {
                            const key = page.server.createKey(keyName.text)
                            if (key.length > 0) {
                                page.newKey = key
                                keyName.text = ""
                            }
                        }
                    }
                }

                // The new key, once.
                Rectangle {
                    objectName: "newKeyBox"
                    visible: page.newKey.length > 0
                    color: Style.findSoft
                    border.color: Style.findBorder
                    radius: 8
                    implicitHeight: newKeyColumn.implicitHeight + 20
                    Layout.fillWidth: true
                    ColumnLayout {
                        id: newKeyColumn
                        anchors.fill: parent
                        anchors.margins: 10
                        spacing: Style.gapSmall
                        Label {
                            text: qsTr("Copy this key now: it will not be shown again.")
                            color: Style.text
                            font.weight: Font.DemiBold
                        }
                        RowLayout {
                            Layout.fillWidth: true
                            TextEdit {
                                objectName: "newKeyText"
                                text: page.newKey
                                readOnly: true
                                selectByMouse: true
                                font.family: Style.monoFont
                                color: Style.text
                                selectionColor: Style.accent
                                Layout.fillWidth: true
                            }
                            Button {
                                id: copyKey
                                objectName: "copyNewKeyButton"
                                property bool copied: false
                                text: copied ? qsTr("Copied") : qsTr("Copy")
                                icon.source: "icons/copy.svg"
                                highlighted: true
                                onClicked: {
                                    page.copy(page.newKey)
                                    copied = true
                                }
                            }
                            Button {
                                text: qsTr("Done")
                                flat: true
                                onClicked: {
                                    page.newKey = ""
                                    copyKey.copied = false
                                }
                            }
                        }
                    }
                }

                Label {
                    visible: page.server.keys.length === 0
                    text: qsTr("No keys yet.")
                    color: Style.textMuted
                }
                Repeater {
                    objectName: "keyList"
                    model: page.server.keys
                    delegate: RowLayout {
                        id: keyRow
                        required property var modelData
                        objectName: "keyRow_" + keyRow.modelData.id
                        spacing: Style.gapLarge
                        Layout.fillWidth: true
                        ColumnLayout {
                            spacing: 0
                            Layout.fillWidth: true
                            Label { text: keyRow.modelData.name; color: Style.text; elide: Text.ElideRight; Layout.fillWidth: true }
                            Label {
                                text: qsTr("created %1 · %2").arg(keyRow.modelData.created)
                                          .arg(keyRow.modelData.lastUsed.length > 0 ? qsTr("last used %1").arg(keyRow.modelData.lastUsed) : qsTr("never used"))
                                color: Style.textMuted
                                font.pixelSize: Style.fontSmall
                            }
                        }
                        Label {
                            text: keyRow.modelData.prefix
                            color: Style.textMuted
                            font.family: Style.monoFont
                            font.pixelSize: Style.fontSmall
                        }
                        Button {
                            objectName: "revokeKeyButton"
                            text: qsTr("Revoke")
                            icon.source: "icons/trash.svg"
                            flat: true
                            onClicked: {
                                revokeDialog.keyId = keyRow.modelData.id
                                revokeDialog.keyName = keyRow.modelData.name
                                revokeDialog.open()
                            }
                        }
                    }
                }
            }

            // --- requests ---
            Card {
                objectName: "serverLogCard"
                title: qsTr("Requests")
                subtitle: qsTr("The last %1 answered, newest first.").arg(200)
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding

                RowLayout {
                    spacing: Style.gap
                    Layout.fillWidth: true
                    Repeater {
                        model: [qsTr("Time"), qsTr("Method"), qsTr("Endpoint"), qsTr("Status"), qsTr("Tokens in → out"), qsTr("Duration")]
                        delegate: Label {
                            required property string modelData
                            required property int index
                            text: modelData
                            color: Style.textMuted
                            font.pixelSize: Style.fontSmall
                            font.weight: Font.DemiBold
                            horizontalAlignment: index >= 3 ? Text.AlignRight : Text.AlignLeft
                            Layout.preferredWidth: [70, 56, 0, 50, 110, 80][index]
                            Layout.fillWidth: index === 2
                        }
                    }
                }
                Rectangle { color: Style.border; implicitHeight: 1; Layout.fillWidth: true }
                Label {
                    visible: page.server.requestLog.count === 0
                    text: page.server.running ? qsTr("No requests yet. Try one of the examples below.")
                                              : qsTr("Requests appear here while the server runs.")
                    color: Style.textMuted
                }
                ListView {
                    objectName: "requestLogList"
                    visible: page.server.requestLog.count > 0
                    model: page.server.requestLog
                    clip: true
                    interactive: contentHeight > height
                    implicitHeight: Math.min(contentHeight, 260)
                    Layout.fillWidth: true
                    ScrollBar.vertical: ScrollBar {}
                    delegate: RowLayout {
                        id: logRow
                        required property string time
                        required property string method
                        required property string path
                        required property int status
                        required property var promptTokens
                        required property var completionTokens
                        required property double durationMs
                        width: ListView.view.width
                        spacing: Style.gap
                        height: 26
                        Label { text: logRow.time; color: Style.textMuted; font.family: Style.monoFont; font.pixelSize: Style.fontSmall; Layout.preferredWidth: 70 }
                        Label { text: logRow.method; color: Style.text; font.family: Style.monoFont; font.pixelSize: Style.fontSmall; Layout.preferredWidth: 56 }
                        Label { text: logRow.path; color: Style.text; font.family: Style.monoFont; font.pixelSize: Style.fontSmall; elide: Text.ElideRight; Layout.fillWidth: true }
                        Label {
                            text: logRow.status
                            color: logRow.status >= 500 ? Style.error : logRow.status >= 400 ? Style.warn : Style.good
                            font.family: Style.monoFont
                            font.pixelSize: Style.fontSmall
                            font.weight: Font.DemiBold
                            horizontalAlignment: Text.AlignRight
                            Layout.preferredWidth: 50
                        }
                        Label {
                            text: logRow.promptTokens > 0 || logRow.completionTokens > 0 ? logRow.promptTokens + " → " + logRow.completionTokens : "–"
                            color: Style.text
                            font.family: Style.monoFont
                            font.pixelSize: Style.fontSmall
                            horizontalAlignment: Text.AlignRight
                            Layout.preferredWidth: 110
                        }
                        Label {
                            text: logRow.durationMs >= 1000 ? (logRow.durationMs / 1000).toFixed(2) + " s" : Math.round(logRow.durationMs) + " ms"
                            color: Style.text
                            font.family: Style.monoFont
                            font.pixelSize: Style.fontSmall
                            horizontalAlignment: Text.AlignRight
                            Layout.preferredWidth: 80
                        }
                    }
                }
            }

            // --- examples ---
            Card {
                objectName: "serverExamplesCard"
                title: qsTr("Try it")
                subtitle: page.server.requireKey ? qsTr("Set WB_API_KEY to one of your keys first (export WB_API_KEY=sk-wb-…).")
                                                 : qsTr("No key is needed while the server runs without one.")
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                Layout.bottomMargin: Style.pagePadding

                TabBar {
                    id: exampleTabs
                    objectName: "exampleTabs"
                    Layout.fillWidth: true
                    TabButton { text: qsTr("curl") }
                    TabButton { text: qsTr("Python (openai)") }
                }
                CodeBlock {
                    objectName: "exampleCode"
                    code: exampleTabs.currentIndex === 0 ? page.server.curlExample : page.server.pythonExample
                    language: exampleTabs.currentIndex === 0 ? "bash" : "python"
                    onCopyRequested: text => page.copy(text)
                    Layout.fillWidth: true
                }
            }
        }
    }
}
