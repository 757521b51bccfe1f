// SamplerSettings: every sampler knob of the engine in one column, with defaults and a reset.
// values() gives the JS object AppController::generateWith takes; two of these make the A/B compare.
// Keys, defaults and ranges come from the settings' field table (App.generationSettingFields); this
// file only says which control shows which key, and how it reads.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

ColumnLayout {
    id: panel

    // key -> {kind, default, uiMin, uiMax, step, ...} (generationtypes.h, settingFieldsForQml)
    readonly property var fields: App.generationSettingFields
    // The chat shows text only: there the per-token alternatives have nothing to show them.
    property bool showAlternatives: true

    // The control of every setting, by its key. Text kinds ("text", "lines") are text areas.
    readonly property var controls: ({
        maxTokens: maxTokens, temperature: temperature, topK: topK, topP: topP, minP: minP,
        repeatPenalty: repeatPenalty, repeatLastN: repeatLastN, frequencyPenalty: frequencyPenalty,
        presencePenalty: presencePenalty, logitBias: biasArea, seed: seed, stop: stopArea, topLogprobs: topLogprobs
    })
    function isText(key) { return fields[key].kind === "text" || fields[key].kind === "lines" }
    function setValue(key, v) {
        if (isText(key)) controls[key].text = String(v)
        else controls[key].value = Number(v)
    }

    function values() {
        const out = {}
        for (const key in fields)
            out[key] = isText(key) ? controls[key].text : controls[key].value
        return out
    }
    function reset() {
        for (const key in fields) setValue(key, fields[key]["default"])
    }
    // Sets every knob named in `v` (a saved preset); the others keep their values.
    function apply(v) {
        for (const key in fields)
            if (v[key] !== undefined) setValue(key, v[key])
    }

    spacing: 2
    Component.onCompleted: reset()

    // Named presets, saved in the session database.
    RowLayout {
        spacing: Style.gapSmall
        Layout.fillWidth: true
        Layout.bottomMargin: Style.gap
        ComboBox {
            id: presetBox
            objectName: "presetBox"
            model: [qsTr("Presets…")].concat(App.presets.map(p => p.name))
            Layout.fillWidth: true
            onActivated: index => {
                if (index > 0) panel.apply(App.presets[index - 1].settings)
            }
        }
        ToolButton {
            objectName: "savePresetButton"
            icon.source: "icons/plus.svg"
            icon.width: 16
            icon.height: 16
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Save these settings as a preset")
            onClicked: {
                presetName.text = presetBox.currentIndex > 0 ? presetBox.currentText : ""
                presetDialog.open()
            }
        }
        ToolButton {
            objectName: "deletePresetButton"
            icon.source: "icons/trash.svg"
            icon.width: 16
            icon.height: 16
            enabled: presetBox.currentIndex > 0
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Delete the chosen preset")
            onClicked: {
                App.deletePreset(presetBox.currentText)
                presetBox.currentIndex = 0
            }
        }
        Dialog {
            id: presetDialog
            objectName: "presetDialog"
            title: qsTr("Save preset")
            anchors.centerIn: Overlay.overlay
            modal: true
            width: 340
            standardButtons: Dialog.Save | Dialog.Cancel
            TextField {
                id: presetName
                width: parent.width
                placeholderText: qsTr("Name, e.g. Precise or Creative")
                selectByMouse: true
                onAccepted: presetDialog.accept()
            }
            onOpened: presetName.forceActiveFocus()
            onAccepted: {
                const name = presetName.text.trim()
                if (name.length === 0 || !App.savePreset(name, panel.values())) return
                const i = App.presets.findIndex(p => p.name === name)
                presetBox.currentIndex = i + 1
            }
        }
    }

    ParameterSlider {
        id: temperature
        objectName: "temperatureSlider"
        label: qsTr("Temperature")
        hint: qsTr("0 always picks the most likely token")
        tip: qsTr("Higher values flatten the probabilities so less likely tokens get picked more often.")
        from: panel.fields.temperature.uiMin; to: panel.fields.temperature.uiMax; stepSize: panel.fields.temperature.step
        Layout.fillWidth: true
    }
    ParameterSpin {
        id: topK
        objectName: "topKBox"
        label: qsTr("Top-k")
        tip: qsTr("Only the k most likely tokens can be picked; 0 turns this off.")
        from: panel.fields.topK.uiMin; to: panel.fields.topK.uiMax; stepSize: panel.fields.topK.step
    }
    ParameterSlider {
        id: topP
        label: qsTr("Top-p")
        tip: qsTr("Only the smallest set of tokens whose probabilities add up to p can be picked; 1 turns this off.")
        from: panel.fields.topP.uiMin; to: panel.fields.topP.uiMax; stepSize: panel.fields.topP.step
        Layout.fillWidth: true
    }
    ParameterSlider {
        id: minP
        label: qsTr("Min-p")
        tip: qsTr("Drops tokens less likely than this fraction of the most likely one; 0 turns this off.")
        from: panel.fields.minP.uiMin; to: panel.fields.minP.uiMax; stepSize: panel.fields.minP.step
        Layout.fillWidth: true
    }
    ParameterSlider {
        id: repeatPenalty
        label: qsTr("Repetition penalty")
        tip: qsTr("Makes tokens that already appeared less likely by this factor; 1 turns this off.")
        from: panel.fields.repeatPenalty.uiMin; to: panel.fields.repeatPenalty.uiMax; stepSize: panel.fields.repeatPenalty.step
        Layout.fillWidth: true
    }
    ParameterSlider {
        id: frequencyPenalty
        label: qsTr("Frequency penalty")
        tip: qsTr("Lowers a token's score by this much for every time it already appeared.")
        from: panel.fields.frequencyPenalty.uiMin; to: panel.fields.frequencyPenalty.uiMax; stepSize: panel.fields.frequencyPenalty.step
        Layout.fillWidth: true
    }
    ParameterSlider {
        id: presencePenalty
        label: qsTr("Presence penalty")
        tip: qsTr("Lowers a token's score by this much once it has appeared at all.")
        from: panel.fields.presencePenalty.uiMin; to: panel.fields.presencePenalty.uiMax; stepSize: panel.fields.presencePenalty.step
        Layout.fillWidth: true
    }
    ParameterSpin {
        id: repeatLastN
        label: qsTr("Penalty window")
        tip: qsTr("How many recent tokens the three penalties look at; -1 means all of them, 0 none.")
        from: panel.fields.repeatLastN.uiMin; to: panel.fields.repeatLastN.uiMax; stepSize: panel.fields.repeatLastN.step
    }
    ParameterSpin {
        id: maxTokens
        objectName: "maxTokensBox"
        label: qsTr("Max tokens")
        tip: qsTr("Generation stops after this many new tokens.")
        // Up to the loaded model's context, which is what can be generated at most.
        from: panel.fields.maxTokens.uiMin; stepSize: panel.fields.maxTokens.step
        to: Math.max(1, App.modelContextLength > 0 ? App.modelContextLength : panel.fields.maxTokens.uiMax)
    }
    ParameterSpin {
        id: seed
        objectName: "seedBox"
        label: qsTr("Seed")
        tip: qsTr("The same seed with the same settings gives the same text; -1 picks a new one each time.")
        from: panel.fields.seed.uiMin; to: panel.fields.seed.uiMax; stepSize: panel.fields.seed.step
        textFromValue: function(v, locale) { return v < 0 ? qsTr("random") : String(v) }
        valueFromText: function(t, locale) { const n = parseInt(t); return isNaN(n) ? -1 : n }
    }
    ParameterSpin {
        id: topLogprobs
        visible: panel.showAlternatives
        label: qsTr("Alternatives shown")
        tip: qsTr("How many of the most likely tokens are kept for each position, to inspect and to swap in.")
        from: panel.fields.topLogprobs.uiMin; to: panel.fields.topLogprobs.uiMax; stepSize: panel.fields.topLogprobs.step
    }
    Label {
        text: qsTr("Stop strings (one per line)")
        color: Style.text
        Layout.topMargin: 6
        HoverHandler { id: stopHover }
        ToolTip.visible: stopHover.hovered
        ToolTip.text: qsTr("Generation ends just before any of these texts would appear.")
        ToolTip.delay: 500
    }
    TextArea {
        id: stopArea
        objectName: "stopArea"
        placeholderText: qsTr("e.g. a blank line")
        font.family: Style.monoFont
        font.pixelSize: Style.fontSmall
        Layout.fillWidth: true
    }
    Label {
        text: qsTr("Logit bias (id:bias or text:bias)")
        color: Style.text
        Layout.topMargin: 6
        HoverHandler { id: biasHover }
        ToolTip.visible: biasHover.hovered
        ToolTip.text: qsTr("Adds the bias to these tokens' scores; text is split into its tokens, -inf bans them.")
        ToolTip.delay: 500
    }
    TextArea {
        id: biasArea
        objectName: "biasArea"
        placeholderText: qsTr("42:-inf\n dragon:3")
        font.family: Style.monoFont
        font.pixelSize: Style.fontSmall
        Layout.fillWidth: true
    }
    Button {
        text: qsTr("Reset to defaults")
        flat: true
        Layout.fillWidth: true
        onClicked: panel.reset()
    }
}
