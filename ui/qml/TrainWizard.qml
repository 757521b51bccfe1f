// TrainWizard: fine-tuning for someone who has never done it, one step per page:
// base model → dataset → method → hyper-parameters → review → run → evaluate → save/export.
// Back/Next move between steps and keep what was entered (every page stays alive, only hidden);
// Enter is Next, Esc cancels (a running check first, else the wizard). Next is blocked until the
// step is sound: a model read, a data file without bad rows, a valid learning rate. The long checks
// run in FineTuneWizard off the GUI thread with a progress bar and a Cancel button. Once started, the
// wizard follows its run (progress, then Evaluate and Save); review(run) opens those steps for any
// finished run, restart() begins another; "Open tuned model" loads the result under the run's name.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Workbench.Ui

Card {
    id: wizard
    objectName: "trainWizard"
    title: qsTr("Fine-tuning wizard")
    subtitle: stepNames[step] + qsTr(" — step %1 of %2").arg(step + 1).arg(stepNames.length)

    // Asks the page to enqueue the run; the page answers with startedRun(runId).
    signal startRequested(string name, var settings)
    signal cancelled()

    readonly property var stepNames: [qsTr("Base model"), qsTr("Dataset"), qsTr("Method"), qsTr("Hyper-parameters"),
                                      qsTr("Review"), qsTr("Run"), qsTr("Evaluate"), qsTr("Save / export")]
    property int step: 0
    property alias service: service
    readonly property var defaults: App.training.defaults()

    // What the steps collect.
    property alias modelPath: modelField.text
    property alias dataPath: dataField.text
    property alias seq: seqBox.value
    property real valFraction: valBox.value / 100
    readonly property bool lora: loraButton.checked
    readonly property string recipe: service.dataset.recipe || "pretrain"
    readonly property var settings: ({
        recipe: wizard.recipe,
        model: modelField.text,
        data: dataField.text,
        lora_rank: wizard.lora ? rankBox.value : 0,
        lora_alpha: wizard.lora ? alphaBox.value : wizard.defaults.lora_alpha,
        lora_dropout: wizard.lora ? dropoutBox.value / 100 : 0,
        lora_targets: wizard.lora ? targetsField.text : "",
        steps: stepsBox.value,
        lr: Number(lrField.text),
        batch: batchBox.value,
        seq: seqBox.value,
        warmup: warmupBox.value,
        weight_decay: Number(wdField.text),
        grad_clip: Number(clipField.text),
        val_fraction: wizard.valFraction,
        val_every: valEveryBox.value,
        sample_every: sampleBox.value,
        save_every: saveBox.value,
        // A chat fine-tune's samples answer a user turn (rendered in the chat template); a story prompt
        // would show nothing of what the run teaches.
        sample_prompt: wizard.recipe === "sft" ? service.defaultPrompts("sft")[0] : wizard.defaults.sample_prompt
    })

    // The run the wizard started (or was given to review), and how it ended; `runs` (the page's
    // RunListModel) knows its folder. Evaluate and export use the run's own settings, not the fields,
    // which may have been edited since.
    property RunListModel runs
    property var runId: 0
    property string runName
    property string runDir
    property string runStatus
    property var runSettings: ({})
    readonly property bool runLora: (runSettings.lora_rank || 0) > 0
    // The run's progress (0..1) and a line about it, from the page's dashboard.
    property real runProgress: 0
    property string runProgressText
    function startedRun(id) {
        runId = id
        runStatus = "queued"
        const stored = runs ? runs.get(id) : ({})
        runSettings = stored.settings || settings  // as stored: what the run really trains with
        runDir = stored.outputDir || ""
    }
    // Opens the Evaluate step for a finished run (one started here before, or picked on the dashboard).
    function review(run) {
        runId = run.runId
        runName = run.name
        runDir = run.outputDir
        runStatus = run.status
        runError = run.error || ""
        runSettings = run.settings || ({})
        promptList.clear()
        for (const p of service.defaultPrompts(runSettings.recipe || "pretrain")) promptList.append({ prompt: p })
        step = 6
    }
    // Back to the first step for another run; what was entered stays.
    function restart() {
        runId = 0
        runName = ""
        runDir = ""
        runStatus = ""
        runError = ""
        runSettings = ({})
        promptList.clear()
        step = 0
    }
    function openTunedModel() { if (runStatus === "done") App.openModelAs(runDir, runName) }
    Connections {
        target: App.training
        function onRunStarted(id) { if (id === wizard.runId) wizard.runStatus = "running" }
        function onRunFinished(id, status, error) {
            if (id !== wizard.runId) return
            wizard.runDir = wizard.runs ? wizard.runs.get(id).outputDir : ""
            wizard.runStatus = status
            wizard.runError = error
        }
    }
    property string runError

    // A newly read model brings the settings that suit its size.
    FineTuneWizard { id: service; onModelChanged: wizard.applySuggested() }

    // Whether Next may be pressed on each step, and why not.
    readonly property bool modelReady: service.model.path !== undefined && service.model.path === modelField.text
    readonly property bool datasetInspected: service.dataset.format !== undefined && inspectedPath === dataField.text
                                              && inspectedSeq === seqBox.value && inspectedModel === modelField.text
    property string inspectedPath
    property int inspectedSeq
    property string inspectedModel
    readonly property bool datasetReady: datasetInspected && service.dataset.badRows === 0 && service.dataset.rows > 0
    readonly property bool settingsReady: isFinite(Number(lrField.text)) && Number(lrField.text) > 0
                                          && isFinite(Number(wdField.text)) && isFinite(Number(clipField.text))
    readonly property string blocker: {
        if (service.busy) return qsTr("Wait for the check to finish, or cancel it.")
        switch (step) {
        case 0: return modelReady ? "" : qsTr("Read the model first.")
        case 1: return !datasetInspected ? qsTr("Check the data file first.")
                      : service.dataset.badRows > 0 ? qsTr("%n row(s) must be fixed before training (see the lines below).", "", service.dataset.badRows)
                      : service.dataset.rows === 0 ? qsTr("The file has no rows.") : ""
        case 3: return settingsReady ? "" : qsTr("Learning rate, weight decay and clipping must be numbers.")
        case 5: return runStatus === "done" ? "" : runStatus === "failed" ? qsTr("The run failed: %1").arg(runError)
                      : qsTr("Training… the dashboard below shows it live.")
        default: return ""
        }
    }
    readonly property bool canNext: blocker.length === 0 && step < stepNames.length - 1

    function next() {
        if (!canNext) return
        if (step === 4) {
            const base = dataField.text.split("/").pop()
            runName = nameField.text.length > 0 ? nameField.text
                                                : qsTr("%1 on %2").arg(wizard.lora ? "LoRA" : wizard.recipe).arg(base)
            startRequested(runName, settings)
            if (runId === 0) return  // not stored: the page shows why
        }
        if (step === 5 && promptList.count === 0) {
            for (const p of service.defaultPrompts(runSettings.recipe || wizard.recipe)) promptList.append({ prompt: p })
        }
        step += 1
    }
    readonly property bool canBack: step > 0 && !(step === 5 && runId !== 0)  // a started run cannot be un-started
    function back() { if (canBack) step -= 1 }
    function cancel() {
        if (service.busy) service.cancel()
        else cancelled()
    }
    function applySuggested() {
        const s = service.suggestedSettings(service.model.parameters || 0, wizard.lora)
        lrField.text = String(s.lr)
        batchBox.value = s.batch
        stepsBox.value = s.steps
        warmupBox.value = s.warmup
        rankBox.value = s.lora_rank
    }
    onLoraChanged: applySuggested()
    function inspectData() {
        inspectedPath = dataField.text
        inspectedSeq = seqBox.value
        inspectedModel = modelField.text
        service.inspectDataset(dataField.text, modelField.text, seqBox.value, wizard.valFraction)
    }
    function duration(s) {
        if (!isFinite(s) || s <= 0) return "—"
        if (s < 1) return qsTr("%1 ms").arg(Math.max(1, Math.round(s * 1000)))
        if (s < 60) return qsTr("%1 s").arg(s.toFixed(s < 10 ? 1 : 0))
        if (s < 3600) return qsTr("%1 min").arg(Math.round(s / 60))
        return qsTr("%1 h %2 min").arg(Math.floor(s / 3600)).arg(Math.round(s % 3600 / 60))
    }

    Keys.onReturnPressed: next()
    Keys.onEnterPressed: next()
    Keys.onEscapePressed: cancel()

    FileDialog {
        id: dataDialog
        title: qsTr("Training data")
        nameFilters: [qsTr("Text or JSONL (*.txt *.jsonl *.json)"), qsTr("All files (*)")]
        onAccepted: dataField.text = decodeURIComponent(selectedFile.toString().replace(/^file:\/\//, ""))
    }
    FolderDialog {
        id: modelDialog
        title: qsTr("Model folder")
        onAccepted: modelField.text = decodeURIComponent(selectedFolder.toString().replace(/^file:\/\//, ""))
    }
    FolderDialog {
        id: exportDialog
        title: qsTr("Save into")
        onAccepted: exportField.text = decodeURIComponent(selectedFolder.toString().replace(/^file:\/\//, "")) + "/"
                                       + (exportKind.currentIndex === 2 ? "model.gguf" : "export")
    }

    // The step indicator: where we are and what is done.
    RowLayout {
        spacing: Style.gapSmall
        Layout.fillWidth: true
        Repeater {
            model: wizard.stepNames
            delegate: Rectangle {
                required property int index
                required property string modelData
                radius: height / 2
                color: index === wizard.step ? Style.accent : index < wizard.step ? Style.accentSoft : "transparent"
                border.color: index <= wizard.step ? Style.accent : Style.border
                implicitHeight: stepLabel.implicitHeight + 8
                implicitWidth: stepLabel.implicitWidth + 18
                Label {
                    id: stepLabel
                    anchors.centerIn: parent
                    text: (index + 1) + " " + modelData
                    font.pixelSize: Style.fontSmall
                    color: index === wizard.step ? Style.surface : index < wizard.step ? Style.accent : Style.textMuted
                }
            }
        }
    }

    InlineMessage {
        objectName: "wizardError"
        text: service.error
        Layout.fillWidth: true
        onCloseRequested: service.clearError()
    }

    // The steps: only the current one is visible, all stay alive (so going back keeps what was entered).
    ColumnLayout {
        id: pages
        Layout.fillWidth: true

        // 1. Base model
        ColumnLayout {
            visible: wizard.step === 0
            Layout.fillWidth: true
            spacing: Style.gap
            WizardField {
                label: qsTr("Base model")
                hint: qsTr("the model training starts from: a Hugging Face folder, a .gguf or an llm.c .bin")
                TextField {
                    id: modelField
                    objectName: "wizardModel"
                    text: App.modelPath
                    selectByMouse: true
                    Layout.fillWidth: true
                    placeholderText: qsTr("Path of the model")
                }
            }
            RowLayout {
                Button { text: qsTr("Use the loaded model"); flat: true; enabled: App.hasModel; onClicked: modelField.text = App.modelPath }
                Button { text: qsTr("Browse…"); flat: true; onClicked: modelDialog.open() }
                Button {
                    objectName: "wizardReadModel"
                    text: qsTr("Read model")
                    highlighted: !wizard.modelReady
                    enabled: modelField.text.length > 0 && !service.busy
                    onClicked: service.inspectModel(modelField.text)
                }
            }
            Label {
                objectName: "wizardModelSummary"
                visible: wizard.modelReady
                text: wizard.modelReady ? qsTr("%1 · %2 parameters · %3 layers · width %4 · %5 heads · context %6 · vocabulary %7")
                                          .arg(service.model.architecture).arg(service.model.parametersText).arg(service.model.layers)
                                          .arg(service.model.width).arg(service.model.heads).arg(service.model.context).arg(service.model.vocab)
                                        : ""
                color: Style.text
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }

        // 2. Dataset
        ColumnLayout {
            visible: wizard.step === 1
            Layout.fillWidth: true
            spacing: Style.gap
            WizardField {
                label: qsTr("Data file")
                hint: qsTr("plain text (pretraining), or JSONL chats {\"messages\": […]} or Alpaca rows (fine-tuning)")
                TextField {
                    id: dataField
                    objectName: "wizardData"
                    selectByMouse: true
                    Layout.fillWidth: true
                    placeholderText: qsTr("Path of a .txt or .jsonl file")
                }
                Button { text: qsTr("Browse…"); flat: true; onClicked: dataDialog.open() }
            }
            WizardField {
                label: qsTr("Sequence length")
                hint: qsTr("tokens per training row; longer rows are cut")
                SpinBox {
                    id: seqBox
                    objectName: "wizardSeq"
                    from: 8; to: Math.max(8, service.model.context || 32768); stepSize: 8; editable: true
                    value: Math.min(wizard.defaults.seq, service.model.context || wizard.defaults.seq)
                }
            }
            WizardField {
                label: qsTr("Validation share")
                hint: qsTr("% of the data held out to measure progress on text the model does not train on")
                SpinBox { id: valBox; objectName: "wizardValShare"; from: 0; to: 50; value: 10; editable: true }
            }
            RowLayout {
                Button {
                    objectName: "wizardInspectData"
                    text: qsTr("Check data")
                    highlighted: !wizard.datasetInspected
                    enabled: dataField.text.length > 0 && !service.busy
                    onClicked: wizard.inspectData()
                }
                Label {
                    visible: wizard.datasetInspected
                    objectName: "wizardDataSummary"
                    readonly property var d: service.dataset
                    text: wizard.datasetInspected
                          ? qsTr("%1 · %2 rows").arg(d.format === "text" ? qsTr("plain text") : d.format === "alpaca" ? qsTr("Alpaca rows") : qsTr("chat messages")).arg(d.rows)
                            + (d.tokensCounted ? qsTr(" · %1 tokens · per row min %2 / mean %3 / max %4").arg(d.totalTokens).arg(d.minRowTokens)
                                                 .arg(Number(d.meanRowTokens).toFixed(1)).arg(d.maxRowTokens) : "")
                            + (d.rowsOverSeq > 0 ? qsTr(" · %1 rows longer than %2 tokens (cut)").arg(d.rowsOverSeq).arg(seqBox.value) : "")
                          : ""
                    color: Style.text
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
            }
            Label {
                visible: wizard.datasetInspected && service.dataset.tokensCounted === true
                objectName: "wizardSplit"
                text: visible ? (service.dataset.format === "text"
                                 ? qsTr("Split: %1 tokens train, %2 validation").arg(service.dataset.trainTokens).arg(service.dataset.valTokens)
                                 : qsTr("Split: %1 rows train (%2 tokens), %3 rows validation (%4 tokens)").arg(service.dataset.trainRows)
                                   .arg(service.dataset.trainTokens).arg(service.dataset.valRows).arg(service.dataset.valTokens))
                              : ""
                color: Style.textMuted
                Layout.fillWidth: true
            }
            // Bad rows, by line: what to fix.
            Repeater {
                model: wizard.datasetInspected ? service.dataset.problems : []
                delegate: Label {
                    required property var modelData
                    objectName: "wizardProblem"
                    text: qsTr("line %1: %2").arg(modelData.line).arg(modelData.message)
                    color: Style.error
                    font.family: Style.monoFont
                    font.pixelSize: Style.fontSmall
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
            }
            Label {
                visible: wizard.datasetInspected && service.dataset.preview.length > 0
                text: qsTr("First rows")
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
            }
            Repeater {
                model: wizard.datasetInspected ? service.dataset.preview : []
                delegate: Label {
                    required property var modelData
                    text: modelData.line + "  " + modelData.text
                    font.family: Style.monoFont
                    font.pixelSize: Style.fontSmall
                    color: Style.text
                    padding: 6
                    maximumLineCount: 4
                    elide: Text.ElideRight
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                    background: Rectangle { color: Style.surfaceAlt; border.color: Style.border; radius: 6 }
                }
            }
        }

        // 3. Method
        ColumnLayout {
            visible: wizard.step === 2
            Layout.fillWidth: true
            spacing: Style.gap
            RowLayout {
                RadioButton { id: fullButton; objectName: "wizardFull"; text: qsTr("Full fine-tuning"); checked: true }
                RadioButton { id: loraButton; objectName: "wizardLora"; text: qsTr("LoRA") }
            }
            Label {
                text: wizard.lora ? qsTr("LoRA trains small low-rank adapters beside frozen weights: far less memory, saved apart or merged.")
                                  : qsTr("Every weight is trained: the most capable, and the most memory (gradients and optimizer state for all).")
                color: Style.textMuted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            WizardField {
                visible: wizard.lora
                label: qsTr("Rank")
                hint: qsTr("size of each adapter; higher learns more and costs more")
                SpinBox { id: rankBox; objectName: "wizardRank"; from: 1; to: 256; value: 8; editable: true }
            }
            WizardField {
                visible: wizard.lora
                label: qsTr("Alpha")
                hint: qsTr("adapter scale is alpha / rank")
                SpinBox { id: alphaBox; from: 1; to: 1024; value: 16; editable: true }
            }
            WizardField {
                visible: wizard.lora
                label: qsTr("Dropout (%)")
                hint: qsTr("dropout on the adapter input, against over-fitting small data")
                SpinBox { id: dropoutBox; from: 0; to: 50; value: 0; editable: true }
            }
            WizardField {
                visible: wizard.lora
                label: qsTr("Targets")
                hint: qsTr("weight groups with adapters, comma-separated; empty = PEFT's defaults")
                TextField { id: targetsField; placeholderText: qsTr("default"); selectByMouse: true; Layout.fillWidth: true }
            }
            Label {
                objectName: "wizardMemory"
                readonly property var est: service.model.parameters ? App.training.estimate(service.model, wizard.settings) : null
                text: est ? qsTr("Memory ≈ %1 (weights %2, gradients %3, optimizer %4, activations %5)")
                            .arg(Style.bytes(est.total)).arg(Style.bytes(est.weights)).arg(Style.bytes(est.gradients))
                            .arg(Style.bytes(est.optimizer)).arg(Style.bytes(est.activations)) : ""
                color: Style.text
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            RowLayout {
                Button {
                    objectName: "wizardMeasure"
                    text: qsTr("Measure time on this machine")
                    enabled: !service.busy && wizard.settingsReady
                    onClicked: service.estimateTime(wizard.settings)
                }
                Label {
                    objectName: "wizardTime"
                    visible: service.timeEstimate.secondsPerStep !== undefined
                    text: visible ? qsTr("Estimate: %1 per step, about %2 for %3 steps (timed from 2 real steps; validation and samples add to it)")
                                    .arg(wizard.duration(service.timeEstimate.secondsPerStep))
                                    .arg(wizard.duration(service.timeEstimate.secondsPerStep * stepsBox.value)).arg(stepsBox.value)
                                  : ""
                    color: Style.textMuted
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
            }
        }

        // 4. Hyper-parameters
        ColumnLayout {
            visible: wizard.step === 3
            Layout.fillWidth: true
            spacing: Style.gap
            RowLayout {
                Label {
                    text: qsTr("Suggested for a model of %1 parameters.").arg(service.model.parametersText || "?")
                    color: Style.textMuted
                    Layout.fillWidth: true
                }
                Button { text: qsTr("Reset to suggested"); flat: true; onClicked: wizard.applySuggested() }
            }
            WizardField {
                label: qsTr("Steps")
                hint: qsTr("optimizer updates; more steps see more data")
                SpinBox { id: stepsBox; objectName: "wizardSteps"; from: 1; to: 1000000; value: wizard.defaults.steps; editable: true }
            }
            WizardField {
                label: qsTr("Learning rate")
                hint: qsTr("size of each update at its peak; too high diverges, too low learns nothing")
                TextField { id: lrField; objectName: "wizardLr"; text: String(wizard.defaults.lr); selectByMouse: true; Layout.fillWidth: true }
            }
            WizardField {
                label: qsTr("Batch size")
                hint: qsTr("rows per step; larger is smoother and needs more memory")
                SpinBox { id: batchBox; objectName: "wizardBatch"; from: 1; to: 1024; value: wizard.defaults.batch; editable: true }
            }
            WizardField {
                label: qsTr("Warmup steps")
                hint: qsTr("steps to ramp the rate up from zero, so early updates stay gentle")
                SpinBox { id: warmupBox; from: 0; to: 100000; value: 0; editable: true }
            }
            WizardField {
                label: qsTr("Weight decay")
                hint: qsTr("pulls weights toward zero a little each step, against over-fitting")
                TextField { id: wdField; text: String(wizard.defaults.weight_decay); selectByMouse: true; Layout.fillWidth: true }
            }
            WizardField {
                label: qsTr("Gradient clipping")
                hint: qsTr("largest allowed gradient norm; stops one bad batch from wrecking the weights")
                TextField { id: clipField; text: String(wizard.defaults.grad_clip); selectByMouse: true; Layout.fillWidth: true }
            }
            WizardField {
                label: qsTr("Validate every")
                hint: qsTr("steps between validation losses (0 = never)")
                SpinBox { id: valEveryBox; from: 0; to: 100000; value: 10; editable: true }
            }
            WizardField {
                label: qsTr("Sample every")
                hint: qsTr("steps between sample generations shown on the dashboard (0 = never)")
                SpinBox { id: sampleBox; from: 0; to: 100000; value: 25; editable: true }
            }
            WizardField {
                label: qsTr("Checkpoint every")
                hint: qsTr("steps between checkpoints; they make pause and resume exact (0 = at the end)")
                SpinBox { id: saveBox; from: 0; to: 100000; value: 25; editable: true }
            }
        }

        // 5. Review
        ColumnLayout {
            visible: wizard.step === 4
            Layout.fillWidth: true
            spacing: Style.gap
            WizardField {
                label: qsTr("Run name")
                hint: qsTr("how the run is listed on the dashboard and the Runs page")
                TextField { id: nameField; objectName: "wizardName"; placeholderText: qsTr("optional"); selectByMouse: true; Layout.fillWidth: true }
            }
            Label { text: qsTr("The same run from a terminal:"); color: Style.textMuted }
            Rectangle {
                color: Style.surfaceAlt
                border.color: Style.border
                radius: 6
                Layout.fillWidth: true
                implicitHeight: cliText.implicitHeight + 20
                TextEdit {
                    id: cliText
                    objectName: "wizardCli"
                    anchors.fill: parent
                    anchors.margins: 10
                    readOnly: true
                    selectByMouse: true
                    wrapMode: TextEdit.WrapAnywhere
                    font.family: Style.monoFont
                    font.pixelSize: Style.fontSmall
                    color: Style.text
                    text: App.training.cliCommand(wizard.settings, "")
                }
            }
            Label {
                text: qsTr("Next starts the run.")
                color: Style.textMuted
            }
        }

        // 6. Run
        ColumnLayout {
            visible: wizard.step === 5
            Layout.fillWidth: true
            spacing: Style.gap
            Label {
                objectName: "wizardRunStatus"
                text: qsTr("Run status: %1").arg(wizard.runStatus || "—")
                color: wizard.runStatus === "failed" ? Style.error : Style.text
                font.weight: Font.DemiBold
            }
            ProgressBar {
                objectName: "wizardRunProgress"
                visible: wizard.runStatus === "running" || wizard.runStatus === "queued" || wizard.runProgress > 0
                value: wizard.runStatus === "done" ? 1 : wizard.runProgress
                Layout.fillWidth: true
            }
            Label {
                visible: text.length > 0
                text: wizard.runProgressText
                color: Style.text
                Layout.fillWidth: true
            }
            Label {
                text: wizard.runStatus === "done"
                      ? qsTr("Done. Next compares the tuned model with the base; or open it now to try it in Chat, Playground and Inspect.")
                      : qsTr("The live dashboard below shows loss, learning rate, gradient norm, speed and samples. When the run is done, go on to compare the tuned model with the base.")
                color: Style.textMuted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }

        // 7. Evaluate
        ColumnLayout {
            visible: wizard.step === 6
            Layout.fillWidth: true
            spacing: Style.gap
            Label {
                text: qsTr("Prompts both models answer (greedy, fixed seed); edit, add or remove:")
                color: Style.textMuted
            }
            ListModel { id: promptList }
            Repeater {
                model: promptList
                delegate: RowLayout {
                    required property int index
                    required property string prompt
                    Layout.fillWidth: true
                    TextField {
                        objectName: "wizardPrompt"
                        text: prompt
                        selectByMouse: true
                        Layout.fillWidth: true
                        onTextEdited: promptList.setProperty(index, "prompt", text)
                    }
                    Button { text: qsTr("Remove"); flat: true; onClicked: promptList.remove(index) }
                }
            }
            RowLayout {
                Button { text: qsTr("Add prompt"); flat: true; onClicked: promptList.append({ prompt: "" }) }
                Button {
                    objectName: "wizardEvaluate"
                    text: qsTr("Evaluate")
                    highlighted: true
                    enabled: !service.busy && wizard.runStatus === "done"
                    onClicked: {
                        const ps = []
                        for (let i = 0; i < promptList.count; ++i) ps.push(promptList.get(i).prompt)
                        service.evaluate(wizard.runSettings, wizard.runDir, ps)
                    }
                }
            }
            Label {
                objectName: "wizardPerplexity"
                readonly property var e: service.evaluation
                visible: e.before !== undefined
                text: visible ? qsTr("Validation loss %1 → %2 · perplexity %3 → %4")
                                .arg(Number(e.before.loss).toFixed(3)).arg(Number(e.after.loss).toFixed(3))
                                .arg(Number(e.before.perplexity).toFixed(2)).arg(Number(e.after.perplexity).toFixed(2)) : ""
                color: Style.text
                font.weight: Font.DemiBold
            }
            GridLayout {
                columns: 3
                columnSpacing: Style.gapLarge
                visible: service.evaluation.answers !== undefined
                Layout.fillWidth: true
                Label { text: qsTr("Prompt"); color: Style.textMuted; font.pixelSize: Style.fontSmall }
                Label { text: qsTr("Base model"); color: Style.textMuted; font.pixelSize: Style.fontSmall }
                Label { text: qsTr("Tuned model"); color: Style.textMuted; font.pixelSize: Style.fontSmall }
                Repeater {
                    model: (service.evaluation.answers || []).length * 3
                    delegate: Label {
                        required property int index
                        readonly property var row: service.evaluation.answers[Math.floor(index / 3)]
                        objectName: index % 3 === 0 ? "answerPrompt" : index % 3 === 1 ? "answerBase" : "answerTuned"
                        text: index % 3 === 0 ? row.prompt : index % 3 === 1 ? row.base : row.tuned
                        color: index % 3 === 0 ? Style.textMuted : Style.text
                        wrapMode: Text.Wrap
                        maximumLineCount: 6
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                        Layout.preferredWidth: 1
                    }
                }
            }
        }

        // 8. Save / export
        ColumnLayout {
            visible: wizard.step === 7
            Layout.fillWidth: true
            spacing: Style.gap
            Label {
                text: qsTr("The tuned model “%1” is in %2. Save a copy in the form you need:").arg(wizard.runName).arg(wizard.runDir)
                color: Style.textMuted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            WizardField {
                label: qsTr("Form")
                hint: exportKind.currentIndex === 1 ? qsTr("the LoRA adapters only (PEFT layout); load them on the base model")
                      : exportKind.currentIndex === 2 ? qsTr("one file for llama.cpp, Ollama or LM Studio")
                      : qsTr("the whole model (LoRA merged in) as a Hugging Face folder")
                ComboBox {
                    id: exportKind
                    objectName: "wizardExportKind"
                    model: wizard.runLora ? [qsTr("HF folder (merged)"), qsTr("Adapter only"), qsTr("GGUF")] : [qsTr("HF folder"), qsTr("—"), qsTr("GGUF")]
                    Layout.fillWidth: true
                }
                ComboBox {
                    id: ggufType
                    visible: exportKind.currentIndex === 2
                    model: ["f32", "f16", "q8_0", "q4_0"]
                }
            }
            WizardField {
                label: qsTr("Destination")
                hint: qsTr("a new folder, or a .gguf file")
                TextField { id: exportField; objectName: "wizardExportPath"; selectByMouse: true; Layout.fillWidth: true }
                Button { text: qsTr("Browse…"); flat: true; onClicked: exportDialog.open() }
            }
            RowLayout {
                Button {
                    objectName: "wizardExport"
                    text: qsTr("Export")
                    highlighted: true
                    enabled: !service.busy && exportField.text.length > 0 && !(exportKind.currentIndex === 1 && !wizard.runLora)
                    onClicked: service.exportModel(wizard.runDir, ["hf", "adapter", "gguf"][exportKind.currentIndex], exportField.text, ggufType.currentText)
                }
                Label {
                    objectName: "wizardExported"
                    text: service.exported.length > 0 ? qsTr("Saved: %1").arg(service.exported) : ""
                    color: Style.good
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
            }
        }
    }

    // A long check in progress, with a way out.
    RowLayout {
        visible: service.busy
        Layout.fillWidth: true
        ProgressBar { objectName: "wizardProgress"; value: service.progress; Layout.fillWidth: true }
        Button { text: qsTr("Cancel check"); flat: true; onClicked: service.cancel() }
    }

    RowLayout {
        Layout.fillWidth: true
        Button { objectName: "wizardCancel"; text: qsTr("Close"); flat: true; onClicked: wizard.cancel() }
        Button {
            objectName: "wizardOpenTuned"
            text: qsTr("Open tuned model")
            icon.source: "icons/models.svg"
            flat: true
            visible: wizard.step >= 5 && wizard.runStatus === "done"
            onClicked: wizard.openTunedModel()
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Load “%1” to try it in Chat, Playground and Inspect").arg(wizard.runName)
        }
        Button {
            objectName: "wizardRestart"
            text: qsTr("Another run")
            flat: true
            visible: wizard.step >= 5 && ["done", "failed", "cancelled"].indexOf(wizard.runStatus) >= 0
            onClicked: wizard.restart()
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Back to the first step, keeping what was entered")
        }
        Label {
            objectName: "wizardBlocker"
            text: wizard.blocker
            color: service.dataset.badRows > 0 && wizard.step === 1 ? Style.error : Style.textMuted
            wrapMode: Text.Wrap
            horizontalAlignment: Text.AlignRight
            Layout.fillWidth: true
        }
        Button { objectName: "wizardBack"; text: qsTr("Back"); enabled: wizard.canBack; onClicked: wizard.back() }
        Button {
            objectName: "wizardNext"
            text: wizard.step === 4 ? qsTr("Start training") : qsTr("Next")
            highlighted: true
            visible: wizard.step < wizard.stepNames.length - 1
            enabled: wizard.canNext
            onClicked: wizard.next()
        }
    }
}
