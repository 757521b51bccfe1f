// TrainSetup: the settings of a new run in one card, in the wizard's order: model → data → method →
// hyper-parameters → review (the equivalent CLI command, copyable) → start. Each setting says in one
// line what it does. Defaults are the CLI's (App.training.defaults()), with a higher learning rate
// for LoRA, whose small adapters start at zero.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Workbench.Ui

Card {
    id: setup
    title: qsTr("New run")
    subtitle: qsTr("Model → data → method → settings → start. The same run from a terminal is shown below.")

    signal startRequested(string name, var settings)

    readonly property var defaults: App.training.defaults()
    property alias modelPath: modelField.text
    property alias dataPath: dataField.text
    readonly property bool lora: methodBox.currentIndex === 1
    readonly property string recipe: recipeBox.currentIndex === 1 ? "sft" : "pretrain"
    readonly property var settings: ({
        recipe: setup.recipe,
        model: modelField.text,
        data: dataField.text,
        lora_rank: setup.lora ? rankBox.value : 0,
        lora_alpha: alphaBox.value,
        steps: stepsBox.value,
        lr: Number(lrField.text),
        batch: batchBox.value,
        seq: seqBox.value,
        val_every: valBox.value,
        sample_every: sampleBox.value,
        save_every: saveBox.value,
        // A chat fine-tune's samples answer a user turn (rendered in the chat template), not a story opening.
        sample_prompt: setup.recipe === "sft" ? qsTr("What can you help me with?") : setup.defaults.sample_prompt
    })
    readonly property bool ready: modelField.text.length > 0 && dataField.text.length > 0 && isFinite(Number(lrField.text))
                                  && Number(lrField.text) > 0

    function start() {
        if (!ready) return
        const base = dataField.text.split("/").pop()
        startRequested(nameField.text.length > 0 ? nameField.text
                                                : qsTr("%1 on %2").arg(setup.lora ? "LoRA" : setup.recipe).arg(base),
                       settings)
    }

    FileDialog {
        id: dataDialog
        title: qsTr("Training data")
        nameFilters: [qsTr("Text or JSONL (*.txt *.jsonl *.json)"), qsTr("All files (*)")]
        onAccepted: {
            const url = selectedFile.toString()
            dataField.text = decodeURIComponent(url.replace(/^file:\/\//, ""))
            recipeBox.currentIndex = /\.jsonl?$/i.test(dataField.text) ? 1 : 0
        }
    }

    GridLayout {
        columns: 3
        columnSpacing: Style.gapLarge
        rowSpacing: Style.gap
        Layout.fillWidth: true

        // Model
        Label { text: qsTr("Base model"); color: Style.text }
        TextField {
            id: modelField
            objectName: "setupModel"
            text: App.modelPath
            placeholderText: qsTr("Open a model on the Models page, or type its path")
            selectByMouse: true
            Layout.fillWidth: true
            Layout.minimumWidth: 120
        }
        Label { text: qsTr("the model to start from"); color: Style.textMuted; font.pixelSize: Style.fontSmall; wrapMode: Text.Wrap; Layout.preferredWidth: 150 }

        // Data
        Label { text: qsTr("Data"); color: Style.text }
        RowLayout {
            Layout.fillWidth: true
            TextField {
                Layout.minimumWidth: 120
                id: dataField
                objectName: "setupData"
                placeholderText: qsTr("A .txt file (pretrain) or .jsonl chats / Alpaca rows (fine-tune)")
                selectByMouse: true
                Layout.fillWidth: true
                onEditingFinished: recipeBox.currentIndex = /\.jsonl?$/i.test(text) ? 1 : 0
            }
            Button { text: qsTr("Browse…"); flat: true; onClicked: dataDialog.open() }
        }
        ComboBox {
            id: recipeBox
            objectName: "setupRecipe"
            model: [qsTr("Pretrain on text"), qsTr("Fine-tune on chats")]
            Layout.preferredWidth: 200
        }

        // Method
        Label { text: qsTr("Method"); color: Style.text }
        RowLayout {
            Layout.fillWidth: true
            ComboBox {
                id: methodBox
                objectName: "setupMethod"
                model: [qsTr("Full fine-tuning"), qsTr("LoRA")]
                Layout.preferredWidth: 190
                onCurrentIndexChanged: lrField.text = currentIndex === 1 ? "0.001" : String(setup.defaults.lr)
            }
            Label { visible: setup.lora; text: qsTr("rank"); color: Style.textMuted }
            SpinBox { id: rankBox; Layout.preferredWidth: 140; visible: setup.lora; from: 1; to: 256; value: 8; editable: true }
            Label { visible: setup.lora; text: qsTr("alpha"); color: Style.textMuted }
            SpinBox { id: alphaBox; Layout.preferredWidth: 140; visible: setup.lora; from: 1; to: 1024; value: 16; editable: true }
        }
        Label {
            text: setup.lora ? qsTr("trains small adapters; the base stays frozen") : qsTr("trains every weight")
            color: Style.textMuted
            font.pixelSize: Style.fontSmall
            wrapMode: Text.Wrap
            Layout.preferredWidth: 150
        }

        // Memory for the loaded model (the estimate needs its shape).
        Label { text: qsTr("Memory"); color: Style.text }
        Label {
            objectName: "setupMemory"
            readonly property var shape: { App.modelName; return App.modelShape() }
            readonly property var est: shape.parameters ? App.training.estimate(shape, setup.settings) : null
            text: est ? qsTr("≈ %1: weights %2, gradients %3, AdamW %4, activations %5")
                        .arg(Style.bytes(est.total)).arg(Style.bytes(est.weights)).arg(Style.bytes(est.gradients)).arg(Style.bytes(est.optimizer)).arg(Style.bytes(est.activations))
                      : qsTr("Open the model to see an estimate")
            color: Style.textMuted
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Label { text: qsTr("estimate for this model and batch"); color: Style.textMuted; font.pixelSize: Style.fontSmall; wrapMode: Text.Wrap; Layout.preferredWidth: 150 }

        // Hyper-parameters
        Label { text: qsTr("Steps"); color: Style.text }
        SpinBox { id: stepsBox; objectName: "setupSteps"; from: 1; to: 1000000; value: setup.defaults.steps; editable: true }
        Label { text: qsTr("optimizer updates in the run"); color: Style.textMuted; font.pixelSize: Style.fontSmall; wrapMode: Text.Wrap; Layout.preferredWidth: 150 }

        Label { text: qsTr("Learning rate"); color: Style.text }
        TextField { id: lrField; objectName: "setupLr"; text: String(setup.defaults.lr); selectByMouse: true; Layout.preferredWidth: 120 }
        Label { text: qsTr("peak step size (cosine decay to 10%)"); color: Style.textMuted; font.pixelSize: Style.fontSmall; wrapMode: Text.Wrap; Layout.preferredWidth: 150 }

        Label { text: qsTr("Batch × sequence"); color: Style.text }
        RowLayout {
            SpinBox { id: batchBox; Layout.preferredWidth: 140; from: 1; to: 1024; value: setup.defaults.batch; editable: true }
            Label { text: "×"; color: Style.textMuted }
            SpinBox { id: seqBox; Layout.preferredWidth: 140; from: 8; to: 32768; value: setup.defaults.seq; stepSize: 8; editable: true }
        }
        Label { text: qsTr("rows per step × tokens per row"); color: Style.textMuted; font.pixelSize: Style.fontSmall; wrapMode: Text.Wrap; Layout.preferredWidth: 150 }

        Label { text: qsTr("Validate / sample / save every"); color: Style.text }
        RowLayout {
            SpinBox { id: valBox; Layout.preferredWidth: 140; from: 0; to: 100000; value: setup.defaults.val_every; editable: true }
            SpinBox { id: sampleBox; Layout.preferredWidth: 140; from: 0; to: 100000; value: 25; editable: true }
            SpinBox { id: saveBox; Layout.preferredWidth: 140; from: 0; to: 100000; value: 25; editable: true }
        }
        Label { text: qsTr("steps (0 = never); checkpoints make pause and restart exact"); color: Style.textMuted; font.pixelSize: Style.fontSmall; wrapMode: Text.Wrap; Layout.preferredWidth: 150 }

        Label { text: qsTr("Name"); color: Style.text }
        TextField { id: nameField; placeholderText: qsTr("optional"); selectByMouse: true; Layout.fillWidth: true }
        Item { implicitWidth: 1 }
    }

    // Review: the same run from a terminal.
    Rectangle {
        color: Style.surfaceAlt
        border.color: Style.border
        radius: 6
        Layout.fillWidth: true
        implicitHeight: cliText.implicitHeight + 20
        TextEdit {
            id: cliText
            objectName: "setupCli"
            anchors.fill: parent
            anchors.margins: 10
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.WrapAnywhere
            font.family: Style.monoFont
            font.pixelSize: Style.fontSmall
            color: Style.textMuted
            text: App.training.cliCommand(setup.settings, "")
        }
    }

    RowLayout {
        Layout.fillWidth: true
        Button {
            text: qsTr("Copy command")
            flat: true
            onClicked: { cliText.selectAll(); cliText.copy(); cliText.deselect() }
        }
        Item { Layout.fillWidth: true }
        Button {
            objectName: "startButton"
            text: App.training.busy ? qsTr("Add to queue") : qsTr("Start training")
            icon.source: "icons/play.svg"
            highlighted: true
            enabled: setup.ready
            onClicked: setup.start()
        }
    }
}
