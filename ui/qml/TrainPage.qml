// TrainPage: fine-tuning and alignment wizard with live dashboards (later issue).
import QtQuick
import Workbench.Ui

PlaceholderPage {
    objectName: "page_train"
    title: qsTr("Train")
    summary: qsTr("Fine-tune (full or LoRA) and align (reward model, PPO, DPO) with live loss curves.")
    iconName: "train"
    plans: [qsTr("A wizard: base model, dataset, method, then a live dashboard"),
            qsTr("Loss, learning rate, gradient norm and tokens per second as they happen"),
            qsTr("Pause, resume and export the result as Hugging Face or GGUF")]
}
