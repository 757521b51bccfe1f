// ModelsPage: open a model, see what it is (and its card, when its recipe wrote one), how well it
// answers held-out questions, and which backend runs it and why.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page
    objectName: "page_models"

    signal openFileRequested()
    signal openFolderRequested()

    // The open model's card (workbench.json) and its task evaluations.
    ModelEvaluator {
        id: evaluator
        objectName: "modelEvaluator"
        modelPath: App.hasModel ? App.modelPath : ""
    }
    Connections {
        target: App
        // Reopening the same folder (Reload, or after a new recipe run wrote it) reads its card again.
        function onModelChanged() { evaluator.reloadCard() }
    }

    ScrollView {
        id: scroll
        anchors.fill: parent
        contentWidth: availableWidth
        clip: true

        ColumnLayout {
            width: scroll.availableWidth
            spacing: Style.gapLarge + 4

            PageHeader {
                title: qsTr("Models")
                subtitle: qsTr("Open a GGUF file, a Hugging Face model folder, a .safetensors file or an llm.c checkpoint.")
                Layout.fillWidth: true
                Layout.topMargin: Style.pagePadding
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
            }

            RowLayout {
                spacing: Style.gap
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                Button {
                    objectName: "openFolderButton"
                    text: qsTr("Open folder…")
                    icon.source: "icons/folder.svg"
                    highlighted: true
                    onClicked: page.openFolderRequested()
                }
                Button {
                    objectName: "openFileButton"
                    text: qsTr("Open file…")
                    icon.source: "icons/file.svg"
                    onClicked: page.openFileRequested()
                }
                Button {
                    text: qsTr("Reload")
                    icon.source: "icons/reload.svg"
                    flat: true
                    enabled: App.hasModel && !App.loading
                    onClicked: App.reloadModel()
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Load the current model again (applies a new thread count)")
                }
            }

            InlineMessage {
                objectName: "modelsError"
                text: App.lastError.length > 0 ? qsTr("The model could not be opened.\n%1").arg(App.lastError) : ""
                onCloseRequested: App.clearError()
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
            }

            GridLayout {
                columns: page.width > 900 ? 2 : 1
                columnSpacing: Style.gapLarge
                rowSpacing: Style.gapLarge
                Layout.fillWidth: true
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                Layout.bottomMargin: Style.pagePadding

                Card {
                    objectName: "currentModelCard"
                    title: qsTr("Current model")
                    subtitle: App.hasModel ? App.modelPath : ""
                    Layout.fillWidth: true
                    Layout.alignment: Qt.AlignTop
                    Layout.rowSpan: 2

                    Label {
                        visible: App.hasModel
                        text: App.modelName
                        font.pixelSize: 20
                        font.weight: Font.DemiBold
                        color: Style.text
                        elide: Text.ElideMiddle
                        Layout.fillWidth: true
                    }

                    GridLayout {
                        visible: App.hasModel
                        columns: 2
                        columnSpacing: 24
                        rowSpacing: 8
                        Layout.fillWidth: true
                        Layout.topMargin: 4
                        Repeater {
                            model: App.modelDetails
                            delegate: Label {
                                id: labelCell
                                required property var modelData
                                required property int index
                                Layout.row: labelCell.index
                                Layout.column: 0
                                text: labelCell.modelData.label
                                color: Style.textMuted
                                font.pixelSize: Style.fontBody
                            }
                        }
                        Repeater {
                            model: App.modelDetails
                            delegate: Label {
                                id: valueCell
                                required property var modelData
                                required property int index
                                Layout.row: valueCell.index
                                Layout.column: 1
                                Layout.fillWidth: true
                                text: valueCell.modelData.value
                                color: valueCell.modelData.warning ? Style.warn : Style.text
                                font.pixelSize: Style.fontBody
                                wrapMode: Text.Wrap
                            }
                        }
                    }

                    ColumnLayout {
                        visible: !App.hasModel
                        spacing: Style.gap
                        Layout.fillWidth: true
                        Label {
                            text: App.loading ? qsTr("Loading…") : qsTr("No model is loaded")
                            font.pixelSize: 17
                            font.weight: Font.DemiBold
                            color: Style.text
                        }
                        Label {
                            text: qsTr("Open a model folder (config.json with model.safetensors and tokenizer files) or a single checkpoint file. The last model you open is reopened next time.")
                            color: Style.textMuted
                            wrapMode: Text.Wrap
                            Layout.fillWidth: true
                        }
                    }
                }

                Card {
                    objectName: "backendCard"
                    title: qsTr("Compute backend")
                    subtitle: qsTr("Chosen automatically: CUDA when an NVIDIA GPU is available, otherwise the CPU.")
                    Layout.fillWidth: true
                    Layout.preferredWidth: 360
                    Layout.alignment: Qt.AlignTop

                    RowLayout {
                        spacing: 12
                        Layout.fillWidth: true
                        Rectangle {
                            width: 40
                            height: 40
                            radius: 10
                            color: Style.accentSoft
                            Icon {
                                anchors.centerIn: parent
                                iconName: "chip"
                                color: Style.accent
                            }
                        }
                        ColumnLayout {
                            spacing: 2
                            Layout.fillWidth: true
                            Label {
                                objectName: "backendName"
                                text: App.backendName.length > 0 ? App.backendName : qsTr("Starting…")
                                font.pixelSize: 17
                                font.weight: Font.DemiBold
                                color: Style.text
                            }
                            Label {
                                text: App.backendReason
                                color: Style.textMuted
                                wrapMode: Text.Wrap
                                Layout.fillWidth: true
                            }
                        }
                    }
                    Label {
                        text: App.backendDescription
                        font.family: Style.monoFont
                        font.pixelSize: Style.fontSmall
                        color: Style.textMuted
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                }

                Card {
                    title: qsTr("Formats")
                    Layout.fillWidth: true
                    Layout.preferredWidth: 360
                    Layout.alignment: Qt.AlignTop

                    Repeater {
                        model: [
                            [qsTr("GGUF file"), qsTr("as llama.cpp, Ollama and LM Studio use: f32, f16, bf16, q8_0, q4_0, q4_K, q6_K")],
                            [qsTr("Hugging Face folder"), qsTr("config.json, model.safetensors, tokenizer.json or vocab.json + merges.txt")],
                            [qsTr("safetensors file"), qsTr("with config.json beside it")],
                            [qsTr("llm.c checkpoint"), qsTr(".bin, tokenizer files beside it")]
                        ]
                        delegate: ColumnLayout {
                            id: formatRow
                            required property var modelData
                            spacing: 0
                            Layout.fillWidth: true
                            Label {
                                text: formatRow.modelData[0]
                                color: Style.text
                                font.pixelSize: Style.fontBody
                            }
                            Label {
                                text: formatRow.modelData[1]
                                color: Style.textMuted
                                font.pixelSize: Style.fontSmall
                                wrapMode: Text.Wrap
                                Layout.fillWidth: true
                            }
                        }
                    }
                }

            }

            // The card and the evaluation sit outside the grid: they appear and disappear with the model, and a
            // grid reflowing around them as a model loads crashes Qt 6.4's layouts.
            // What the model's recipe says about it: present only when its workbench.json has a "card".
            Card {
                id: modelCard
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                objectName: "modelCard"
                readonly property var card: evaluator.card
                visible: App.hasModel && Object.keys(card).length > 0
                title: card.title !== undefined ? card.title : qsTr("Model card")
                subtitle: qsTr("From the model's workbench.json")
                Layout.fillWidth: true
                Layout.alignment: Qt.AlignTop

                Label {
                    objectName: "modelCardSummary"
                    visible: modelCard.card.summary !== undefined
                    text: modelCard.card.summary || ""
                    color: Style.text
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                ColumnLayout {
                    visible: modelCard.card.trainedOn !== undefined
                    spacing: 2
                    Layout.fillWidth: true
                    Label {
                        text: qsTr("Trained on")
                        color: Style.textMuted
                        font.pixelSize: Style.fontSmall
                        font.weight: Font.DemiBold
                    }
                    // One label, not a Repeater: delegates destroyed while a layout is being polished
                    // (the card changes with the model) crash Qt 6.4's layouts.
                    Label {
                        objectName: "modelCardTrainedOn"
                        text: (modelCard.card.trainedOn || []).map(t => "•  " + t).join("\n")
                        color: Style.text
                        font.pixelSize: Style.fontBody
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                }
                InlineMessage {
                    objectName: "modelCardLimitations"
                    isError: false
                    closable: false
                    text: modelCard.card.limitations || ""
                    Layout.fillWidth: true
                }
                ColumnLayout {
                    visible: modelCard.card.evals !== undefined
                    spacing: Style.gap
                    Layout.fillWidth: true
                    Label {
                        text: qsTr("Evaluations recorded by its recipe")
                        color: Style.textMuted
                        font.pixelSize: Style.fontSmall
                        font.weight: Font.DemiBold
                    }
                    EvalResults {
                        objectName: "modelCardEvals"
                        rows: modelCard.card.evals || []
                        Layout.fillWidth: true
                    }
                }
            }

            // Held-out questions asked of the open model, here and now (as `eval --task` does).
            Card {
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                objectName: "evaluationCard"
                visible: App.hasModel
                title: qsTr("Evaluation")
                subtitle: qsTr("Exact-match accuracy on %1 held-out questions per task: sums, facts about the generated world, and chat replies that stay in the template and stop.").arg(evaluator.items)
                Layout.fillWidth: true
                Layout.alignment: Qt.AlignTop

                RowLayout {
                    spacing: Style.gap
                    Layout.fillWidth: true
                    Button {
                        objectName: "evaluateButton"
                        text: evaluator.results.length > 0 ? qsTr("Evaluate again") : qsTr("Evaluate")
                        icon.source: "icons/play.svg"
                        enabled: App.hasModel && App.modelHasTokenizer && !App.loading && !evaluator.busy
                        onClicked: evaluator.evaluate()
                    }
                    ProgressBar {
                        objectName: "evaluationProgress"
                        visible: evaluator.busy
                        value: evaluator.progress
                        Layout.fillWidth: true
                    }
                    Button {
                        objectName: "evaluationCancel"
                        visible: evaluator.busy
                        text: qsTr("Cancel")
                        flat: true
                        onClicked: evaluator.cancel()
                    }
                    Item { visible: !evaluator.busy; Layout.fillWidth: true }
                }
                Label {
                    visible: App.hasModel && !App.modelHasTokenizer
                    text: qsTr("This model has no tokenizer, so it cannot be asked questions.")
                    color: Style.textMuted
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                InlineMessage {
                    objectName: "evaluationError"
                    text: evaluator.error.length > 0 ? qsTr("The evaluation failed.\n%1").arg(evaluator.error) : ""
                    onCloseRequested: evaluator.clearError()
                    Layout.fillWidth: true
                }
                EvalResults {
                    objectName: "evaluationResults"
                    visible: evaluator.results.length > 0
                    rows: evaluator.results
                    Layout.fillWidth: true
                }
            }


            // Models opened before (from the session database), newest first.
            Card {
                Layout.leftMargin: Style.pagePadding
                Layout.rightMargin: Style.pagePadding
                Layout.bottomMargin: Style.pagePadding
                objectName: "recentModelsCard"
                title: qsTr("Recent models")
                subtitle: App.recentModels.length === 0 ? qsTr("Models you open are listed here.") : ""
                Layout.fillWidth: true
                Layout.alignment: Qt.AlignTop

                Repeater {
                    model: App.recentModels
                    delegate: RowLayout {
                        id: recentRow
                        required property var modelData
                        spacing: Style.gap
                        Layout.fillWidth: true
                        ColumnLayout {
                            spacing: 0
                            Layout.fillWidth: true
                            Label {
                                text: recentRow.modelData.name + (recentRow.modelData.current ? qsTr("  (open)") : "")
                                color: Style.text
                                font.weight: Font.DemiBold
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                            Label {
                                text: [recentRow.modelData.architecture, recentRow.modelData.parameters + qsTr(" parameters"),
                                       recentRow.modelData.weights, qsTr("context %1").arg(recentRow.modelData.contextLength),
                                       recentRow.modelData.format].filter(x => x.length > 0).join(" · ")
                                color: Style.textMuted
                                font.pixelSize: Style.fontSmall
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                            Label {
                                text: recentRow.modelData.exists ? recentRow.modelData.path : qsTr("%1 (missing)").arg(recentRow.modelData.path)
                                color: recentRow.modelData.exists ? Style.textFaint : Style.warn
                                font.family: Style.monoFont
                                font.pixelSize: Style.fontSmall
                                elide: Text.ElideMiddle
                                Layout.fillWidth: true
                            }
                        }
                        Button {
                            text: qsTr("Open")
                            flat: true
                            enabled: recentRow.modelData.exists && !recentRow.modelData.current && !App.loading
                            onClicked: App.openModel(recentRow.modelData.path)
                        }
                        ToolButton {
                            icon.source: "icons/close.svg"
                            icon.width: 14
                            icon.height: 14
                            icon.color: Style.textMuted
                            ToolTip.visible: hovered
                            ToolTip.text: qsTr("Remove from this list (the files stay)")
                            onClicked: App.forgetRecentModel(recentRow.modelData.path)
                        }
                    }
                }
            }
        }
    }
}
