// Qt Quick Test of the sampler settings panel (Playground and the chat's sampling popup): keys,
// defaults and ranges come from the settings' field table (App.generationSettingFields), values()
// is what the controls show, reset() and a preset load into the controls, presets save what the
// controls show into the session database (App.presets) and come back from it, and every setting
// has a tooltip that says what it does.
import QtQuick
import QtQuick.Controls
import QtTest
import Workbench.Ui

Item {
    width: 420
    height: 1300

    SamplerSettings {
        id: panel
        width: 380
    }

    TestCase {
        name: "SamplerSettings"
        when: windowShown

        function control(name) {
            const c = findChild(panel, name)
            verify(c, name)
            return c
        }
        // Every ParameterSlider / ParameterSpin of the panel (they carry `tip`).
        function parameterControls(item, out) {
            for (let i = 0; i < item.children.length; ++i) {
                const c = item.children[i]
                if (c.tip !== undefined && c.label !== undefined) out.push(c)
                parameterControls(c, out)
            }
            return out
        }

        function init() { panel.reset() }
        function cleanupTestCase() {
            for (const p of App.presets) App.deletePreset(p.name)
        }

        function test_defaultsComeFromTheEngine() {
            const d = App.defaultGenerationSettings()
            const v = panel.values()
            for (const key of ["temperature", "topK", "topP", "minP", "repeatPenalty", "repeatLastN", "frequencyPenalty",
                               "presencePenalty", "maxTokens", "seed", "topLogprobs"])
                fuzzyCompare(v[key], d[key], 1e-6, key)
            compare(v.stop, "")
            compare(v.logitBias, "")
        }
        function test_rangesAndKeysComeFromTheTable() {
            const fields = App.generationSettingFields
            compare(Object.keys(panel.values()).sort(), Object.keys(fields).sort())
            compare(control("temperatureSlider").from, fields.temperature.uiMin)
            compare(control("temperatureSlider").to, fields.temperature.uiMax)
            compare(control("temperatureSlider").stepSize, fields.temperature.step)
            compare(control("topKBox").to, fields.topK.uiMax)
            compare(control("seedBox").from, -1)
            compare(control("maxTokensBox").from, fields.maxTokens.uiMin)
        }
        function test_valuesReflectTheControls() {
            control("temperatureSlider").value = 0.35
            control("topKBox").value = 7
            control("maxTokensBox").value = 77
            control("seedBox").value = 1234
            control("stopArea").text = "END\nSTOP"
            control("biasArea").text = "42:-inf"
            const v = panel.values()
            fuzzyCompare(v.temperature, 0.35, 1e-9)
            compare(v.topK, 7)
            compare(v.maxTokens, 77)
            compare(v.seed, 1234)
            compare(v.stop, "END\nSTOP")
            compare(v.logitBias, "42:-inf")
            panel.reset()
            compare(panel.values().topK, App.defaultGenerationSettings().topK)
            compare(control("stopArea").text, "")
        }
        function test_applyLoadsIntoTheControls() {
            const before = panel.values()
            panel.apply({ temperature: 0, topK: 1, stop: "###", logitBias: "13:2" })
            compare(control("temperatureSlider").value, 0)
            compare(control("topKBox").value, 1)
            compare(control("stopArea").text, "###")
            compare(control("biasArea").text, "13:2")
            // Settings the preset does not name keep their values.
            fuzzyCompare(panel.values().topP, before.topP, 1e-9)
            compare(panel.values().maxTokens, before.maxTokens)
        }
        function test_presetsSaveAndLoadThroughTheDatabase() {
            control("temperatureSlider").value = 1.25
            control("topKBox").value = 12
            control("stopArea").text = "The end"
            const saved = panel.values()
            mouseClick(control("savePresetButton"))
            const dialog = control("presetDialog")
            tryVerify(() => dialog.opened)
            keyClick(Qt.Key_W)
            keyClick(Qt.Key_I)
            keyClick(Qt.Key_L)
            keyClick(Qt.Key_D)
            keyClick(Qt.Key_Return)
            tryVerify(() => !dialog.visible)
            const stored = App.presets.find(p => p.name === "wild")
            verify(stored, "the preset is in the database")
            fuzzyCompare(stored.settings.temperature, 1.25, 1e-9)
            compare(stored.settings.topK, 12)
            compare(stored.settings.stop, "The end")
            const box = control("presetBox")
            compare(box.currentText, "wild")

            panel.reset()
            compare(control("topKBox").value, App.defaultGenerationSettings().topK)
            box.activated(box.find("wild"))
            fuzzyCompare(control("temperatureSlider").value, 1.25, 1e-9)
            compare(control("topKBox").value, 12)
            compare(control("stopArea").text, "The end")
            compare(JSON.stringify(panel.values()), JSON.stringify(saved))

            box.currentIndex = box.find("wild")
            mouseClick(control("deletePresetButton"))
            verify(!App.presets.some(p => p.name === "wild"))
            compare(box.find("wild"), -1)
        }
        function test_everySettingHasATooltip() {
            const controls = parameterControls(panel, [])
            verify(controls.length >= 11, "found " + controls.length)
            for (const c of controls)
                verify(c.tip.length > 20, c.label + " explains itself")
            // Hovering shows it.
            const temperature = control("temperatureSlider")
            mouseMove(temperature, 10, 5)
            tryVerify(() => temperature.ToolTip.visible)
            compare(temperature.ToolTip.text, temperature.tip)
            mouseMove(panel, panel.width - 2, panel.height - 2)
            tryVerify(() => !temperature.ToolTip.visible)
        }
    }
}
