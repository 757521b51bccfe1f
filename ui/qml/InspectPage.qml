// InspectPage: look inside the model on your own text. One forward pass (on the engine thread) gives
// every layer x head's attention and the logit lens; three views show them:
//   Attention  — one head (or the mean / max over a layer's heads) as a query x key heatmap with token
//                labels, hover for exact weights, wheel to zoom and drag to pan, and beside it the
//                bertviz-style lines between two token columns for a clicked token;
//   All heads  — every layer x head as a thumbnail (drawn on the thread pool); click one to open it,
//                Ctrl-/Shift-click to pick several and overlay their mean or max in the heatmap;
//   Logit lens — layers x positions, each cell the top next-token prediction after that layer,
//                coloured by its probability.
// PNG and CSV export for the heatmap, CSV for the lens.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Workbench.Ui

Item {
    id: page
    objectName: "page_inspect"

    // Set by Main.qml: the Playground's last prompt and output, for "Use the Playground run".
    property string playgroundText
    signal goToPlaygroundRequested()

    readonly property bool hasInspection: heatmap.tokenCount > 0 || lens.positions > 0
    readonly property bool canInspect: App.hasModel && App.modelHasTokenizer && !App.loading
    property alias inputText: input.text
    property alias heatmap: heatmap
    property alias currentView: tabs.currentIndex
    property string notice

    function inspect() {
        if (!canInspect || input.text.length === 0) return
        notice = ""
        App.inspectText(input.text)
    }
    function headValue(index) { return index === 0 ? AttentionHeatmap.MeanOfHeads : index === 1 ? AttentionHeatmap.MaxOfHeads : index - 2 }
    function openHead(layer, head) {
        layerBox.currentIndex = layer
        headBox.currentIndex = head + 2
        tabs.currentIndex = 0
    }
    // Two or more picked heads replace the layer / head choice in the heatmap (and the lines view).
    readonly property bool overlayActive: picked.count > 1
    property int overlayMode: AttentionHeatmap.OverlayMean
    function clickHead(layer, head, modifiers) {
        picked.click(layer, head, modifiers)
        if (!(modifiers & (Qt.ControlModifier | Qt.ShiftModifier))) openHead(layer, head)
    }
    function report(error, path) { notice = error.length > 0 ? error : qsTr("Saved %1").arg(path) }

    Shortcut {
        sequences: ["Ctrl+Return", "Ctrl+Enter"]
        enabled: page.visible
        onActivated: page.inspect()
    }

    HeadGridModel {
        id: grid
        objectName: "headGridModel"
        inspection: App.inspection
        thumbnailSize: 64
        onInspectionChanged: picked.clear()  // picks of another inspection mean nothing here
    }
    HeadSelection { id: picked; objectName: "headSelection" }
    LogitLensModel { id: lens; inspection: App.inspection }

    FileDialog {
        id: saveDialog
        property string kind
        fileMode: FileDialog.SaveFile
        currentFolder: App.dialogFolder
        nameFilters: kind === "png" ? [qsTr("PNG images (*.png)")]
                   : kind === "snapshot" ? [qsTr("Inspection snapshots (*.wbinspect)")] : [qsTr("CSV files (*.csv)")]
        onAccepted: {
            const path = selectedFile.toString()
            if (kind === "png") page.report(heatmap.exportPng(path), path)
            else if (kind === "csv") page.report(heatmap.exportCsv(path), path)
            else if (kind === "snapshot") page.report(App.saveInspection(path), path)
            else page.report(lens.exportCsv(path), path)
        }
    }
    FileDialog {
        id: openDialog
        fileMode: FileDialog.OpenFile
        currentFolder: App.dialogFolder
        nameFilters: [qsTr("Inspection snapshots (*.wbinspect)"), qsTr("All files (*)")]
        onAccepted: page.notice = App.openInspection(selectedFile.toString())
    }
    function save(kind) { saveDialog.kind = kind; saveDialog.open() }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: Style.pagePadding
        spacing: Style.gapLarge

        PageHeader {
            title: qsTr("Inspect")
            subtitle: qsTr("Attention of every layer and head, and what each layer would predict, on your own text.")
            Layout.fillWidth: true
        }

        Card {
            Layout.fillWidth: true
            padding: 14
            Rectangle {
                color: Style.surfaceAlt
                border.color: input.activeFocus ? Style.accent : Style.border
                radius: 6
                Layout.fillWidth: true
                Layout.preferredHeight: 54
                ScrollView {
                    anchors.fill: parent
                    anchors.margins: 2
                    TextArea {
                        id: input
                        objectName: "inspectInput"
                        placeholderText: qsTr("Text to look inside — a prompt, or a prompt and its answer")
                        wrapMode: TextArea.Wrap
                        font.family: Style.monoFont
                        font.pixelSize: Style.fontBody
                        background: null
                    }
                }
            }
            RowLayout {
                spacing: Style.gap
                Layout.fillWidth: true
                Button {
                    objectName: "inspectButton"
                    text: App.inspecting ? qsTr("Inspecting…") : qsTr("Inspect")
                    highlighted: true
                    enabled: page.canInspect && input.text.length > 0 && !App.inspecting
                    onClicked: page.inspect()
                }
                Button {
                    text: qsTr("Use Playground run")
                    flat: true
                    enabled: page.playgroundText.length > 0
                    onClicked: { input.text = page.playgroundText; page.inspect() }
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("The Playground's last prompt and its output")
                }
                Button {
                    text: qsTr("Open snapshot…")
                    flat: true
                    onClicked: openDialog.open()
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("A saved inspection: opens at once, without the model")
                }
                Item { Layout.fillWidth: true }
                ProgressBar {
                    visible: App.inspecting
                    value: App.inspectProgress
                    Layout.preferredWidth: 160
                }
                Label {
                    text: qsTr("Ctrl+Enter inspects")
                    color: Style.textFaint
                    font.pixelSize: Style.fontSmall
                }
            }
        }

        Label {
            objectName: "inspectSource"
            visible: text.length > 0
            text: App.inspectSource
            color: Style.textMuted
            elide: Text.ElideRight
            Layout.fillWidth: true
        }
        InlineMessage {
            text: App.inspectError
            Layout.fillWidth: true
            closable: false
        }
        InlineMessage {
            text: page.notice
            isError: page.notice.length > 0 && !page.notice.startsWith(qsTr("Saved"))
            Layout.fillWidth: true
            onCloseRequested: page.notice = ""
        }

        Label {
            visible: !page.hasInspection
            text: !App.hasModel ? qsTr("Open a model first (Models page), then type some text above.")
                                : qsTr("Type some text above and press Inspect. Short texts (under a few hundred tokens) are the easiest to read.")
            color: Style.textMuted
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        RowLayout {
            visible: page.hasInspection
            Layout.fillWidth: true
            TabBar {
                id: tabs
                objectName: "inspectTabs"
                TabButton { text: qsTr("Attention"); width: implicitWidth + 24 }
                TabButton { text: qsTr("All heads"); width: implicitWidth + 24 }
                TabButton { text: qsTr("Logit lens"); width: implicitWidth + 24 }
            }
            Item { Layout.fillWidth: true }
            Button {
                text: qsTr("Save snapshot…")
                flat: true
                onClicked: page.save("snapshot")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Keep this inspection to reopen later without recomputing it")
            }
        }

        StackLayout {
            visible: page.hasInspection
            currentIndex: tabs.currentIndex
            Layout.fillWidth: true
            Layout.fillHeight: true

            // ---- Attention: one head as a heatmap, and the lines view
            ColumnLayout {
                spacing: Style.gap
                RowLayout {
                    spacing: Style.gap
                    Layout.fillWidth: true
                    Label { text: qsTr("Layer"); color: Style.textMuted; visible: !page.overlayActive }
                    ComboBox {
                        id: layerBox
                        visible: !page.overlayActive
                        objectName: "layerBox"
                        model: grid.layers
                        // Layers count from 0, as in the head grid, the overlay legend and the CLI.
                        displayText: qsTr("%1 (of 0–%2)").arg(currentIndex).arg(grid.layers - 1)
                        implicitWidth: 120
                    }
                    Label { text: qsTr("Head"); color: Style.textMuted; visible: !page.overlayActive }
                    ComboBox {
                        id: headBox
                        visible: !page.overlayActive
                        objectName: "headBox"
                        model: {
                            let names = [qsTr("Mean of heads"), qsTr("Max of heads")]
                            for (let h = 0; h < grid.heads; ++h) names.push(qsTr("Head %1").arg(h))
                            return names
                        }
                        implicitWidth: 160
                    }
                    OverlayLegend {
                        visible: page.overlayActive
                        selection: picked
                        mode: page.overlayMode
                        onModeChosen: (m) => page.overlayMode = m
                        Layout.fillWidth: true
                    }
                    Button { text: qsTr("Fit"); flat: true; onClicked: heatmap.resetView(); enabled: heatmap.zoom > 1 }
                    Item { Layout.fillWidth: true }
                    Button { text: qsTr("Export PNG"); flat: true; onClicked: page.save("png") }
                    Button { text: qsTr("Export CSV"); flat: true; onClicked: page.save("csv") }
                }
                RowLayout {
                    spacing: Style.gapLarge
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    Rectangle {
                        color: Style.surface
                        border.color: Style.border
                        radius: Style.radius
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        Layout.minimumWidth: 320
                        AttentionHeatmap {
                            id: heatmap
                            objectName: "attentionHeatmap"
                            anchors.fill: parent
                            anchors.margins: 10
                            inspection: App.inspection
                            layerIndex: Math.max(0, layerBox.currentIndex)
                            head: page.headValue(headBox.currentIndex)
                            overlayHeads: page.overlayActive ? picked.heads : []
                            overlayMode: page.overlayMode
                            labelColor: Style.text
                            onCellClicked: (query, key) => lines.selectedToken = heatmap.selectedToken
                        }
                        BusyIndicator {
                            // A new head or overlay is being computed; the old matrix stays until it is.
                            running: heatmap.busy
                            visible: running
                            width: 36; height: 36
                            anchors.right: parent.right
                            anchors.top: parent.top
                            anchors.margins: 8
                        }
                    }
                    ColumnLayout {
                        spacing: Style.gap
                        Layout.preferredWidth: 360
                        Layout.maximumWidth: 360
                        Layout.fillHeight: true
                        Rectangle {
                            color: Style.surface
                            border.color: Style.border
                            radius: Style.radius
                            Layout.fillWidth: true
                            Layout.fillHeight: true
                            clip: true
                            AttentionLines {
                                id: lines
                                objectName: "attentionLines"
                                anchors.fill: parent
                                anchors.margins: 6
                                anchors.rightMargin: 14
                                source: heatmap
                                labelColour: Style.text
                                attendsColour: Style.accent
                                attendedColour: Style.warn
                                onSelectedTokenChanged: heatmap.selectedToken = selectedToken
                            }
                            ScrollBar {
                                orientation: Qt.Vertical
                                anchors.right: parent.right
                                anchors.top: parent.top
                                anchors.bottom: parent.bottom
                                size: lines.contentHeight > 0 ? Math.min(1, lines.height / lines.contentHeight) : 1
                                position: lines.contentHeight > 0 ? lines.contentY / lines.contentHeight : 0
                                active: true
                                onPositionChanged: if (pressed) lines.contentY = position * lines.contentHeight
                            }
                        }
                        Label {
                            text: lines.selectedToken < 0
                                  ? qsTr("Click a token to see where it attends (left → right) and what attends to it (right → left).")
                                  : qsTr("Blue: where it attends · orange: what attends to it")
                            color: Style.textMuted
                            font.pixelSize: Style.fontSmall
                            wrapMode: Text.Wrap
                            Layout.fillWidth: true
                        }
                    }
                }
                RowLayout {
                    spacing: Style.gapLarge
                    Layout.fillWidth: true
                    Label {
                        objectName: "hoverReadout"
                        text: heatmap.hoverText.length > 0 ? heatmap.hoverText
                              : qsTr("%1 tokens · hover a cell for its weight · wheel zooms, drag pans").arg(heatmap.tokenCount)
                        color: Style.textMuted
                        font.family: Style.monoFont
                        font.pixelSize: Style.fontSmall
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    ColourScaleLegend { scale: heatmap; Layout.preferredWidth: 240 }
                }
            }

            // ---- All heads: layers x heads thumbnails
            ColumnLayout {
                spacing: Style.gap
                Label {
                    text: qsTr("Every layer (rows) and head (columns). Click one to open it; Ctrl-click to pick several, Shift-click for a block, and overlay them. The number is the head's mean entropy in bits: low looks at few tokens, high spreads out.")
                    color: Style.textMuted
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                RowLayout {
                    spacing: Style.gap
                    Layout.fillWidth: true
                    Layout.preferredHeight: 40
                    OverlayLegend {
                        visible: picked.count > 0
                        selection: picked
                        mode: page.overlayMode
                        onModeChosen: (m) => page.overlayMode = m
                        Layout.fillWidth: true
                    }
                    Label {
                        visible: picked.count === 0
                        text: grid.ready ? qsTr("No heads picked") : qsTr("Drawing thumbnails…")
                        color: Style.textFaint
                        Layout.fillWidth: true
                    }
                    Button {
                        objectName: "showOverlayButton"
                        text: qsTr("Show overlay")
                        flat: true
                        enabled: page.overlayActive
                        onClicked: tabs.currentIndex = 0
                    }
                }
                TableView {
                    id: gridView
                    objectName: "headGrid"
                    model: grid
                    clip: true
                    columnSpacing: 8
                    rowSpacing: 8
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    ScrollBar.vertical: ScrollBar {}
                    ScrollBar.horizontal: ScrollBar {}
                    delegate: Rectangle {
                        id: cell
                        required property int layerIndex
                        required property int headIndex
                        required property var thumbnail
                        required property double entropy
                        // Reads picked.heads so the binding re-runs whenever the picks change.
                        readonly property bool isPicked: picked.heads.length >= 0 && picked.isSelected(layerIndex, headIndex)
                        readonly property bool isOpen: !page.overlayActive && layerIndex === layerBox.currentIndex
                                                       && headIndex === page.headValue(headBox.currentIndex)
                        implicitWidth: 92
                        implicitHeight: 110
                        radius: 6
                        color: isPicked ? Style.accentSoft : cellMouse.containsMouse ? Style.surfaceAlt : Style.surface
                        border.color: isPicked || isOpen ? Style.accent : Style.border
                        border.width: isPicked ? 2 : 1
                        Rectangle {
                            // Stands in for the thumbnail until the thread pool delivers it.
                            x: 6; y: 6
                            width: 80; height: 80
                            color: Style.surfaceAlt
                            visible: cell.thumbnail === undefined || cell.thumbnail === null || isNaN(cell.entropy)
                        }
                        HeatmapImage {
                            x: 6; y: 6
                            width: 80; height: 80
                            image: cell.thumbnail
                        }
                        Label {
                            x: 6; y: 88
                            text: isNaN(cell.entropy) ? "L%1 H%2".arg(cell.layerIndex).arg(cell.headIndex)
                                                      : "L%1 H%2 · %3".arg(cell.layerIndex).arg(cell.headIndex).arg(cell.entropy.toFixed(1))
                            color: cell.isPicked ? Style.accent : Style.textMuted
                            font.pixelSize: 11
                            font.weight: cell.isPicked ? Font.DemiBold : Font.Normal
                        }
                        MouseArea {
                            id: cellMouse
                            anchors.fill: parent
                            hoverEnabled: true
                            onClicked: (mouse) => page.clickHead(cell.layerIndex, cell.headIndex, mouse.modifiers)
                        }
                    }
                }
            }

            // ---- Logit lens: layers x positions
            ColumnLayout {
                spacing: Style.gap
                RowLayout {
                    Layout.fillWidth: true
                    Label {
                        text: qsTr("What the model would predict next if it stopped after each layer (top row: its real output). Underlined: the actual next token. Hover for the top %1.").arg(5)
                        color: Style.textMuted
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    Button { text: qsTr("Export CSV"); flat: true; onClicked: page.save("lens") }
                }
                GridLayout {
                    columns: 2
                    rowSpacing: 0
                    columnSpacing: 0
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    Item { implicitWidth: 64; implicitHeight: 26 }
                    HorizontalHeaderView {
                        syncView: lensView
                        clip: true
                        Layout.fillWidth: true
                        implicitHeight: 26
                        delegate: Item {
                            required property string display
                            implicitWidth: 86
                            implicitHeight: 26
                            Label {
                                anchors.fill: parent
                                text: parent.display
                                padding: 4
                                verticalAlignment: Text.AlignBottom
                                elide: Text.ElideRight
                                font.family: Style.monoFont
                                font.pixelSize: Style.fontSmall
                                color: Style.textMuted
                            }
                        }
                    }
                    VerticalHeaderView {
                        syncView: lensView
                        clip: true
                        implicitWidth: 64
                        Layout.fillHeight: true
                        delegate: Item {
                            required property string display
                            implicitWidth: 64
                            implicitHeight: 30
                            Label {
                                anchors.fill: parent
                                text: parent.display
                                rightPadding: 8
                                verticalAlignment: Text.AlignVCenter
                                horizontalAlignment: Text.AlignRight
                                color: Style.textMuted
                                font.pixelSize: Style.fontSmall
                            }
                        }
                    }
                    TableView {
                        id: lensView
                        objectName: "lensView"
                        model: lens
                        clip: true
                        columnSpacing: 1
                        rowSpacing: 1
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        // Every position fits when it can (columns share the width, 56 to 120 px); a longer
                        // text scrolls, with its scroll bar always shown so the hidden columns are no secret.
                        readonly property real fittedWidth: lens.positions > 0
                            ? Math.max(56, Math.min(120, (width - columnSpacing * (lens.positions - 1)) / lens.positions)) : 86
                        columnWidthProvider: function(column) { return fittedWidth }
                        onFittedWidthChanged: forceLayout()
                        ScrollBar.horizontal: ScrollBar {
                            objectName: "lensScrollBar"
                            policy: lensView.contentWidth > lensView.width + 1 ? ScrollBar.AlwaysOn : ScrollBar.AsNeeded
                        }
                        ScrollBar.vertical: ScrollBar {}
                        delegate: Rectangle {
                            required property string display
                            required property double prob
                            required property color colour
                            required property color textColour
                            required property string alternatives
                            required property bool correct
                            implicitWidth: 86
                            implicitHeight: 30
                            color: colour
                            Label {
                                anchors.fill: parent
                                anchors.margins: 3
                                text: parent.display
                                color: parent.textColour
                                font.family: Style.monoFont
                                font.pixelSize: Style.fontSmall
                                font.underline: parent.correct
                                elide: Text.ElideRight
                                verticalAlignment: Text.AlignVCenter
                            }
                            MouseArea {
                                id: lensMouse
                                anchors.fill: parent
                                hoverEnabled: true
                            }
                            ToolTip.visible: lensMouse.containsMouse
                            ToolTip.delay: 300
                            ToolTip.text: alternatives
                        }
                    }
                }
                ColourScaleLegend { scale: heatmap; caption: qsTr("probability of the top token"); Layout.preferredWidth: 300 }
            }
        }
    }
}
