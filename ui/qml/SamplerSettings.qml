// SamplerSettings: every sampler knob of the engine in one column, with defaults and a reset.
// values() gives the JS object AppController::generateWith takes; two of these make the A/B compare.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

ColumnLayout {
    id: panel

    readonly property var defaults: App.defaultGenerationSettings()

    function values() {
        return {
            temperature: temperature.value, topK: topK.value, topP: topP.value, minP: minP.value,
            repeatPenalty: repeatPenalty.value, repeatLastN: repeatLastN.value,
            frequencyPenalty: frequencyPenalty.value, presencePenalty: presencePenalty.value,
            maxTokens: maxTokens.value, seed: seed.value, topLogprobs: topLogprobs.value,
            stop: stopArea.text, logitBias: biasArea.text
        }
    }
    function reset() {
        temperature.value = defaults.temperature
        topK.value = defaults.topK
        topP.value = defaults.topP
        minP.value = defaults.minP
        repeatPenalty.value = defaults.repeatPenalty
        repeatLastN.value = defaults.repeatLastN
        frequencyPenalty.value = defaults.frequencyPenalty
        presencePenalty.value = defaults.presencePenalty
        maxTokens.value = defaults.maxTokens
        seed.value = defaults.seed
        topLogprobs.value = defaults.topLogprobs
        stopArea.text = ""
        biasArea.text = ""
    }

    // Sets every knob named in `v` (a saved preset); the others keep their values.
    function apply(v) {
        const sliders = { temperature: temperature, topK: topK, topP: topP, minP: minP, repeatPenalty: repeatPenalty,
                          repeatLastN: repeatLastN, frequencyPenalty: frequencyPenalty, presencePenalty: presencePenalty,
                          maxTokens: maxTokens, seed: seed, topLogprobs: topLogprobs }
        for (const key in sliders)
            if (v[key] !== undefined) sliders[key].value = Number(v[key])
        if (v.stop !== undefined) stopArea.text = String(v.stop)
        if (v.logitBias !== undefined) biasArea.text = String(v.logitBias)
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
        from: 0; to: 2; stepSize: 0.05
        Layout.fillWidth: true
    }
    ParameterSpin {
        id: topK
        objectName: "topKBox"
        label: qsTr("Top-k")
        tip: qsTr("Only the k most likely tokens can be picked; 0 turns this off.")
        from: 0; to: 1000
    }
    ParameterSlider {
        id: topP
        label: qsTr("Top-p")
        tip: qsTr("Only the smallest set of tokens whose probabilities add up to p can be picked; 1 turns this off.")
        from: 0.05; to: 1; stepSize: 0.01
        Layout.fillWidth: true
    }
    ParameterSlider {
        id: minP
        label: qsTr("Min-p")
        tip: qsTr("Drops tokens less likely than this fraction of the most likely one; 0 turns this off.")
        from: 0; to: 1; stepSize: 0.01
        Layout.fillWidth: true
    }
    ParameterSlider {
        id: repeatPenalty
        label: qsTr("Repetition penalty")
        tip: qsTr("Makes tokens that already appeared less likely by this factor; 1 turns this off.")
        from: 1; to: 2; stepSize: 0.05
        Layout.fillWidth: true
    }
    ParameterSlider {
        id: frequencyPenalty
        label: qsTr("Frequency penalty")
        tip: qsTr("Lowers a token's score by this much for every time it already appeared.")
        from: 0; to: 2; stepSize: 0.05
        Layout.fillWidth: true
    }
    ParameterSlider {
        id: presencePenalty
        label: qsTr("Presence penalty")
        tip: qsTr("Lowers a token's score by this much once it has appeared at all.")
        from: 0; to: 2; stepSize: 0.05
        Layout.fillWidth: true
    }
    ParameterSpin {
        id: repeatLastN
        label: qsTr("Penalty window")
        tip: qsTr("How many recent tokens the three penalties look at; -1 means all of them, 0 none.")
        from: -1; to: 4096; stepSize: 16
    }
    ParameterSpin {
        id: maxTokens
        objectName: "maxTokensBox"
        label: qsTr("Max tokens")
        tip: qsTr("Generation stops after this many new tokens.")
        from: 1; to: Math.max(1, App.modelContextLength > 0 ? App.modelContextLength : 4096); stepSize: 16
    }
    ParameterSpin {
        id: seed
        objectName: "seedBox"
        label: qsTr("Seed")
        tip: qsTr("The same seed with the same settings gives the same text; -1 picks a new one each time.")
        from: -1; to: 2147483647
        textFromValue: function(v, locale) { return v < 0 ? qsTr("random") : String(v) }
        valueFromText: function(t, locale) { const n = parseInt(t); return isNaN(n) ? -1 : n }
    }
    ParameterSpin {
        id: topLogprobs
        label: qsTr("Alternatives shown")
        tip: qsTr("How many of the most likely tokens are kept for each position, to inspect and to swap in.")
        from: 0; to: 20
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
