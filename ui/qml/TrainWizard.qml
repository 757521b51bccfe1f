// TrainWizard: fine-tuning for someone who has never done it, one step per page:
// base model → dataset → method → hyper-parameters → review → run → evaluate → save/export.
// The data decides which recipes are offered (plain text: pretraining; chats: SFT; preference pairs: a
// reward model or DPO; prompts with answers: GRPO or PPO); the method step picks one of them, and for
// PPO the reward (the built-in exact-match scorer or a reward model); the hyper-parameter step adds the
// recipe's own settings, with the CLI's defaults (FineTuneWizard.alignmentDefaults).
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
    // The recipes the checked data file can train, and the one picked among them.
    readonly property string dataFormat: datasetInspected ? (service.dataset.format || "") : ""
    readonly property var recipeChoices: dataFormat === "pairs" ? ["reward", "dpo"]
                                         : dataFormat === "prompts" ? ["grpo", "ppo"]
                                         : dataFormat === "text" ? ["pretrain"]
                                         : dataFormat.length > 0 ? ["sft"] : []
    property string pickedRecipe
    readonly property string recipe: recipeChoices.indexOf(pickedRecipe) >= 0 ? pickedRecipe
                                                                              : (service.dataset.recipe || "pretrain")
    readonly property bool alignment: ["reward", "dpo", "grpo", "ppo"].indexOf(recipe) >= 0
    readonly property bool lora: loraButton.checked
    readonly property var recipeInfo: ({
        pretrain: { name: qsTr("Pretraining"), text: qsTr("The model learns to continue text like this file's.") },
        sft: { name: qsTr("Supervised fine-tuning (SFT)"), text: qsTr("The model learns to give the assistant replies of these chats.") },
        reward: { name: qsTr("Reward model"), text: qsTr("A copy of the model learns to score replies, the chosen one of each pair above the rejected one; PPO can then train against it.") },
        dpo: { name: qsTr("DPO"), text: qsTr("The model itself learns to prefer the chosen reply of each pair over the rejected one, with no reward model.") },
        grpo: { name: qsTr("GRPO"), text: qsTr("The model answers each prompt several times and learns from the answers that beat their group's average score.") },
        ppo: { name: qsTr("PPO"), text: qsTr("The model answers, a reward scores each answer, and a value head learns what to expect, guiding every update.") }
    })
    // The recipe's own settings as typed (strings; see alignmentFields), reset to the defaults when the recipe changes.
    property var alignValues: ({})
    onRecipeChanged: { alignValues = service.alignmentDefaults(recipe); applySuggested() }
    function setAlignValue(key, value) {
        const v = Object.assign({}, alignValues)
        v[key] = value
        alignValues = v
    }
    // PPO's reward: "" is the built-in exact-match scorer, else a reward model's folder.
    property bool useRewardModel: false
    property alias rewardModelPath: rewardModelField.text
    readonly property var alignmentFields: [
        { key: "beta", recipes: ["dpo"], label: qsTr("Beta"), hint: qsTr("how strongly the model is held to where it started; lower lets it move further") },
        { key: "beta", recipes: ["grpo"], label: qsTr("KL weight (beta)"), hint: qsTr("penalty for drifting from the starting model; 0 turns it off") },
        { key: "group_size", recipes: ["grpo"], label: qsTr("Group size"), hint: qsTr("answers sampled per prompt, each scored against the group's average") },
        { key: "max_new_tokens", recipes: ["grpo", "ppo"], label: qsTr("Answer length"), hint: qsTr("tokens per sampled answer, at most") },
        { key: "temperature", recipes: ["grpo", "ppo"], label: qsTr("Temperature"), hint: qsTr("randomness of the sampled answers; some is needed to find better ones") },
        { key: "clip", recipes: ["grpo", "ppo"], label: qsTr("Clip range"), hint: qsTr("how far one update may change an answer's probability") },
        { key: "kl_coef", recipes: ["ppo"], label: qsTr("KL coefficient"), hint: qsTr("reward taken away for drifting from the starting model") },
        { key: "target_kl", recipes: ["ppo"], label: qsTr("Target KL"), hint: qsTr("adapt the KL coefficient to keep the drift near this (0 = keep it fixed)") },
        { key: "kl_horizon", recipes: ["ppo"], label: qsTr("KL horizon"), hint: qsTr("with a target: answers over which the coefficient moves by at most 20%") },
        { key: "ppo_epochs", recipes: ["ppo"], label: qsTr("PPO epochs"), hint: qsTr("passes over each batch of sampled answers") },
        { key: "num_minibatches", recipes: ["ppo"], label: qsTr("Minibatches"), hint: qsTr("updates per pass; must divide the batch size") },
        { key: "gae_gamma", recipes: ["ppo"], label: qsTr("Discount (gamma)"), hint: qsTr("how much the final reward counts for earlier tokens (1 = fully)") },
        { key: "gae_lambda", recipes: ["ppo"], label: qsTr("GAE lambda"), hint: qsTr("trusts the real reward (1) or the value head's guesses (0) when crediting tokens") },
        { key: "vf_coef", recipes: ["ppo"], label: qsTr("Value loss weight"), hint: qsTr("how much training the value head counts in each update") },
        { key: "cliprange_value", recipes: ["ppo"], label: qsTr("Value clip range"), hint: qsTr("how far one update may move the value head's estimates") },
        { key: "entropy_coef", recipes: ["ppo"], label: qsTr("Entropy bonus"), hint: qsTr("reward for keeping answers varied (0 = none)") }
    ]
    readonly property var recipeFields: alignmentFields.filter(f => f.recipes.indexOf(recipe) >= 0)
    // The recipe's settings as numbers (kl_estimator and reward_model as text), only those of the recipe.
    readonly property var alignmentSettings: {
        const out = {}
        for (const key in alignValues) {
            if (key === "kl_estimator") out[key] = alignValues[key]
            else if (key === "reward_model") out[key] = useRewardModel ? rewardModelField.text : ""
            else out[key] = Number(alignValues[key])
        }
        return out
    }
    readonly property var settings: Object.assign({
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
        // A reward model does not write, so it has no samples.
        sample_every: wizard.recipe === "reward" ? 0 : sampleBox.value,
        save_every: saveBox.value,
        // A chat recipe's samples answer a user turn (rendered in the chat template); a story prompt
        // would show nothing of what the run teaches.
        sample_prompt: wizard.recipe === "pretrain" ? wizard.defaults.sample_prompt : service.defaultPrompts("sft")[0]
    }, wizard.alignmentSettings)

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
    readonly property bool runIsAlignment: ["reward", "dpo", "grpo", "ppo"].indexOf(runSettings.recipe || "") >= 0
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
                                          && alignmentReady
    readonly property bool alignmentReady: recipeFields.every(f => String(alignValues[f.key]).trim().length > 0
                                                                   && isFinite(Number(alignValues[f.key])))
    // PPO's own checks, in the CLI's words.
    readonly property string ppoProblem: recipe !== "ppo" ? ""
        : batchBox.value % Number(alignValues.num_minibatches || 1) !== 0
          ? qsTr("--num-minibatches %1 does not divide --batch %2").arg(alignValues.num_minibatches).arg(batchBox.value)
        : useRewardModel && rewardModelField.text.length === 0 ? qsTr("Choose the reward model, or use the built-in scorer.")
        : ""
    readonly property string blocker: {
        if (service.busy) return qsTr("Wait for the check to finish, or cancel it.")
        switch (step) {
        case 0: return modelReady ? "" : qsTr("Read the model first.")
        case 1: return !datasetInspected ? qsTr("Check the data file first.")
                      : service.dataset.badRows > 0 ? qsTr("%n row(s) must be fixed before training (see the lines below).", "", service.dataset.badRows)
                      : service.dataset.rows === 0 ? qsTr("The file has no rows.") : ""
        case 2: return ppoProblem
        case 3: return ppoProblem.length > 0 ? ppoProblem
                      : settingsReady ? "" : alignmentReady ? qsTr("Learning rate, weight decay and clipping must be numbers.")
                      : qsTr("Every setting of the recipe must be a number.")
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
                                                : qsTr("%1 on %2").arg(wizard.lora ? "LoRA " + wizard.recipe : wizard.recipe).arg(base)
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
        const s = service.suggestedSettings(service.model.parameters || 0, wizard.lora, wizard.recipe)
        lrField.text = String(s.lr)
        batchBox.value = s.batch
        stepsBox.value = s.steps
        warmupBox.value = s.warmup
        rankBox.value = s.lora_rank
    }
    onLoraChanged: applySuggested()
    Component.onCompleted: alignValues = service.alignmentDefaults(recipe)
    // The finished reward-model runs of the run store, for PPO's reward: [{name, path}].
    function rewardRuns() {
        const out = []
        if (!runs) return out
        for (let i = 0; i < runs.rowCount(); ++i) {
            const r = runs.get(runs.idAt(i))
            if (r.recipe === "reward" && r.status === "done") out.push({ name: r.name, path: r.outputDir })
        }
        return out
    }
    // Starts over on the dataset step with this data file (e.g. the preference pairs just exported).
    function useDataFile(path) {
        if (step >= 5) restart()  // a run followed here stays on the dashboard
        dataField.text = path
        step = modelReady ? 1 : 0
    }
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
        id: rewardModelDialog
        title: qsTr("Reward model folder")
        onAccepted: rewardModelField.text = decodeURIComponent(selectedFolder.toString().replace(/^file:\/\//, ""))
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
                hint: qsTr("plain text (pretraining); JSONL chats {\"messages\": […]} or Alpaca rows (fine-tuning); JSONL pairs {prompt, chosen, rejected} (reward model, DPO); JSONL prompts {prompt, answer, kind} (GRPO, PPO)")
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
                    readonly property string formatName: ({ text: qsTr("plain text"), alpaca: qsTr("Alpaca rows"),
                                                             pairs: qsTr("preference pairs"), prompts: qsTr("prompts with answers") })[d.format]
                                                           || qsTr("chat messages")
                    text: wizard.datasetInspected
                          ? qsTr("%1 · %2 rows").arg(formatName).arg(d.rows)
                            + (d.tokensCounted ? qsTr(" · %1 tokens · per row min %2 / mean %3 / max %4").arg(d.totalTokens).arg(d.minRowTokens)
                                                 .arg(Number(d.meanRowTokens).toFixed(1)).arg(d.maxRowTokens) : "")
                            + (d.rowsOverSeq > 0 ? (d.format === "prompts"
                                                    ? qsTr(" · %1 prompts leave no room for an answer within %2 tokens (skipped)").arg(d.rowsOverSeq).arg(seqBox.value)
                                                    : qsTr(" · %1 rows longer than %2 tokens (cut)").arg(d.rowsOverSeq).arg(seqBox.value)) : "")
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
            Label { text: qsTr("What to train"); color: Style.text; font.weight: Font.DemiBold }
            Repeater {
                model: wizard.recipeChoices
                delegate: ColumnLayout {
                    required property string modelData
                    spacing: 0
                    Layout.fillWidth: true
                    RadioButton {
                        objectName: "wizardRecipe_" + modelData
                        text: wizard.recipeInfo[modelData].name
                        checked: wizard.recipe === modelData
                        onClicked: wizard.pickedRecipe = modelData
                    }
                    Label {
                        text: wizard.recipeInfo[modelData].text
                        color: Style.textMuted
                        font.pixelSize: Style.fontSmall
                        wrapMode: Text.Wrap
                        leftPadding: 32
                        Layout.fillWidth: true
                    }
                }
            }
            // PPO's reward: the exact-match scorer, or a reward model trained before.
            ColumnLayout {
                visible: wizard.recipe === "ppo"
                spacing: 0
                Layout.fillWidth: true
                Label { text: qsTr("Reward"); color: Style.text; font.weight: Font.DemiBold }
                RadioButton {
                    objectName: "wizardRewardBuiltin"
                    text: qsTr("Built-in scorer: 1 when the answer matches the row's \"answer\", else 0")
                    checked: !wizard.useRewardModel
                    onClicked: wizard.useRewardModel = false
                }
                RadioButton {
                    objectName: "wizardRewardModel"
                    text: qsTr("A reward model: its score of each answer")
                    checked: wizard.useRewardModel
                    onClicked: wizard.useRewardModel = true
                }
                RowLayout {
                    visible: wizard.useRewardModel
                    Layout.fillWidth: true
                    Layout.leftMargin: 32
                    ComboBox {
                        id: rewardRunBox
                        objectName: "wizardRewardRuns"
                        readonly property var choices: wizard.recipe === "ppo" && wizard.step === 2 ? wizard.rewardRuns() : []
                        model: choices.map(r => r.name)
                        displayText: choices.length === 0 ? qsTr("no finished reward-model runs") : currentText
                        enabled: choices.length > 0
                        Layout.preferredWidth: 240
                        onActivated: function(index) { rewardModelField.text = choices[index].path }
                    }
                    TextField {
                        id: rewardModelField
                        objectName: "wizardRewardModelPath"
                        placeholderText: qsTr("Folder of a reward model")
                        selectByMouse: true
                        Layout.fillWidth: true
                    }
                    Button { text: qsTr("Browse…"); flat: true; onClicked: rewardModelDialog.open() }
                }
            }
            Label { text: qsTr("How"); color: Style.text; font.weight: Font.DemiBold }
            RowLayout {
                RadioButton { id: fullButton; objectName: "wizardFull"; text: qsTr("Full fine-tuning"); checked: true }
                RadioButton {
                    id: loraButton
                    objectName: "wizardLora"
                    text: qsTr("LoRA")
                }
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
                visible: wizard.recipe !== "reward"
                label: qsTr("Sample every")
                hint: qsTr("steps between sample generations shown on the dashboard (0 = never)")
                SpinBox { id: sampleBox; from: 0; to: 100000; value: 25; editable: true }
            }
            WizardField {
                label: qsTr("Checkpoint every")
                hint: qsTr("steps between checkpoints; they make pause and resume exact (0 = at the end)")
                SpinBox { id: saveBox; from: 0; to: 100000; value: 25; editable: true }
            }
            Label {
                visible: wizard.recipeFields.length > 0
                text: qsTr("%1 settings").arg(wizard.recipeInfo[wizard.recipe].name)
                color: Style.text
                font.weight: Font.DemiBold
                Layout.topMargin: Style.gap
            }
            Repeater {
                model: wizard.recipeFields
                delegate: WizardField {
                    required property var modelData
                    label: modelData.label
                    hint: modelData.hint
                    TextField {
                        objectName: "wizardAlign_" + modelData.key
                        text: String(wizard.alignValues[modelData.key])
                        selectByMouse: true
                        Layout.preferredWidth: 180
                        color: isFinite(Number(text)) && text.trim().length > 0 ? Style.text : Style.error
                        onTextEdited: wizard.setAlignValue(modelData.key, text)
                    }
                }
            }
            WizardField {
                visible: wizard.recipe === "ppo"
                label: qsTr("KL estimator")
                hint: qsTr("k1: log-ratio to the starting model (the usual); k3: an estimate that is never negative")
                ComboBox {
                    objectName: "wizardAlign_kl_estimator"
                    model: ["k1", "k3"]
                    currentIndex: wizard.alignValues.kl_estimator === "k3" ? 1 : 0
                    onActivated: function(index) { wizard.setAlignValue("kl_estimator", index === 1 ? "k3" : "k1") }
                }
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
                text: wizard.runIsAlignment
                      ? qsTr("The starting model against the trained one, on the data the run held out (%1 % of it):")
                        .arg(Math.round((wizard.runSettings.val_fraction || 0) * 100))
                      : qsTr("Prompts both models answer (greedy, fixed seed); edit, add or remove:")
                color: Style.textMuted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            ListModel { id: promptList }
            Repeater {
                model: wizard.runIsAlignment ? 0 : promptList
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
                Button {
                    visible: !wizard.runIsAlignment
                    text: qsTr("Add prompt")
                    flat: true
                    onClicked: promptList.append({ prompt: "" })
                }
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
            // Alignment recipes: each measure, starting model → trained model.
            GridLayout {
                objectName: "wizardAlignmentTable"
                readonly property var e: service.evaluation
                visible: e.kind === "alignment"
                columns: 3
                columnSpacing: Style.gapLarge
                rowSpacing: 10
                Layout.fillWidth: true
                Label {
                    text: (service.evaluation.recipe === "grpo" || service.evaluation.recipe === "ppo"
                           ? qsTr("%1 held-out prompts") : qsTr("%1 held-out pairs")).arg(service.evaluation.heldOut || 0)
                    color: Style.textMuted
                    font.pixelSize: Style.fontSmall
                    Layout.fillWidth: true
                }
                Label { text: qsTr("Starting model"); color: Style.textMuted; font.pixelSize: Style.fontSmall; Layout.preferredWidth: 120 }
                Label { text: qsTr("Trained model"); color: Style.textMuted; font.pixelSize: Style.fontSmall; Layout.preferredWidth: 120 }
                Repeater {
                    model: (service.evaluation.measures || []).length * 3
                    delegate: Label {
                        required property int index
                        readonly property var m: service.evaluation.measures[Math.floor(index / 3)]
                        readonly property var value: index % 3 === 1 ? m.before : m.after
                        objectName: index % 3 === 0 ? "measureName" : index % 3 === 1 ? "measureBefore" : "measureAfter"
                        text: index % 3 === 0 ? "<b>" + m.name + "</b><br><small>" + m.explanation + "</small>"
                              : value === undefined || value === null ? "—"
                              : m.share ? (value * 100).toFixed(1) + " %" : Number(value).toFixed(3)
                        textFormat: index % 3 === 0 ? Text.StyledText : Text.PlainText
                        color: Style.text
                        font.pixelSize: index % 3 === 0 ? Style.fontSmall + 1 : Style.fontSmall + 4
                        font.weight: index % 3 === 2 ? Font.DemiBold : Font.Normal
                        wrapMode: index % 3 === 0 ? Text.Wrap : Text.NoWrap
                        Layout.fillWidth: index % 3 === 0
                        Layout.preferredWidth: index % 3 === 0 ? -1 : 120
                        Layout.alignment: Qt.AlignTop
                    }
                }
            }
            // GRPO, PPO: a few held-out prompts answered by both.
            GridLayout {
                columns: 3
                columnSpacing: Style.gapLarge
                visible: (service.evaluation.taskAnswers || []).length > 0
                Layout.fillWidth: true
                Label { text: qsTr("Held-out prompt (answer)"); color: Style.textMuted; font.pixelSize: Style.fontSmall }
                Label { text: qsTr("Starting model"); color: Style.textMuted; font.pixelSize: Style.fontSmall }
                Label { text: qsTr("Trained model"); color: Style.textMuted; font.pixelSize: Style.fontSmall }
                Repeater {
                    model: (service.evaluation.taskAnswers || []).length * 3
                    delegate: Label {
                        required property int index
                        readonly property var row: service.evaluation.taskAnswers[Math.floor(index / 3)]
                        readonly property bool correct: index % 3 === 1 ? row.baseCorrect : row.tunedCorrect
                        objectName: index % 3 === 0 ? "taskPrompt" : index % 3 === 1 ? "taskBase" : "taskTuned"
                        text: index % 3 === 0 ? qsTr("%1 (%2)").arg(row.prompt).arg(row.expected)
                                              : (correct ? "✓ " : "✗ ") + (index % 3 === 1 ? row.base : row.tuned)
                        color: index % 3 === 0 ? Style.textMuted : correct ? Style.good : Style.text
                        wrapMode: Text.Wrap
                        maximumLineCount: 4
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                        Layout.preferredWidth: 1
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
                    model: ["f32", "f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q5_K"]
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
