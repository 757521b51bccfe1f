// InspectPage: the model's internals on your own prompts (later issue).
import QtQuick
import Workbench.Ui

PlaceholderPage {
    objectName: "page_inspect"
    title: qsTr("Inspect")
    summary: qsTr("Look inside the model: token probabilities, attention heatmaps and the logit lens on your prompts.")
    iconName: "inspect"
    plans: [qsTr("Tokenizer view: how your text splits into tokens"),
            qsTr("Attention per layer and head, exportable as PNG"),
            qsTr("Top-k alternatives and per-layer predictions for every position")]
}
