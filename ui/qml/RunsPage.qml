// RunsPage: history of training runs and their metrics (later issue).
import QtQuick
import Workbench.Ui

PlaceholderPage {
    objectName: "page_runs"
    title: qsTr("Runs")
    summary: qsTr("Every training run with its settings and metrics, to browse, compare and export.")
    iconName: "runs"
    plans: [qsTr("Overlay the curves of several runs"),
            qsTr("Sample generations recorded during training"),
            qsTr("Metrics exportable as CSV or JSONL")]
}
