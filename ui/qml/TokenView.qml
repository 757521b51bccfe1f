// TokenView: generated text as token chips coloured by the probability the model gave each one.
// Hover shows a token's id, probability and top alternatives (below the token, or above it at the
// window's bottom: never over the token itself or the prompt above the output); a click opens the
// alternatives, and picking one emits alternativeChosen (the page truncates there and continues).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Workbench.Ui

ScrollView {
    id: view

    property TokenStreamModel tokens
    property string placeholder
    property bool interactive: true
    signal alternativeChosen(int row, int altIndex)

    clip: true
    contentWidth: availableWidth

    // Whitespace made visible, so a token that is only a space or a newline still has a chip.
    function shown(t) {
        return t.replace(/\n/g, "↵").replace(/\t/g, "→")
    }
    function percent(p) {
        return (p * 100).toFixed(p >= 0.1 ? 0 : 1) + "%"
    }

    // Keep the newest token in view while it streams, unless the user scrolled up to read.
    Connections {
        target: view.tokens
        function onCountChanged() {
            const f = view.contentItem
            if (App.generating && f && f.contentY >= f.contentHeight - f.height - 48)
                Qt.callLater(function() { f.contentY = Math.max(0, f.contentHeight - f.height) })
        }
    }

    Label {
        visible: !view.tokens || view.tokens.count === 0
        text: view.placeholder
        color: Style.textFaint
        font.pixelSize: Style.fontBody + 1
        wrapMode: Text.Wrap
        width: view.availableWidth
    }

    Flow {
        id: flow
        objectName: "tokenFlow"
        width: view.availableWidth
        spacing: 2

        Repeater {
            model: view.tokens
            delegate: Rectangle {
                id: chip
                required property int index
                required property string text
                required property int tokenId
                required property double prob
                required property var alternatives

                width: pieceLabel.implicitWidth + 6
                height: pieceLabel.implicitHeight + 4
                radius: 3
                color: Style.probColor(prob)
                border.width: chipMouse.containsMouse ? 1 : 0
                border.color: Style.accent

                Label {
                    id: pieceLabel
                    anchors.centerIn: parent
                    text: view.shown(chip.text.length > 0 ? chip.text : "·")
                    color: Style.text
                    font.family: Style.monoFont
                    font.pixelSize: Style.fontBody
                }
                MouseArea {
                    id: chipMouse
                    anchors.fill: parent
                    hoverEnabled: true
                    cursorShape: view.interactive && chip.alternatives.length > 1 ? Qt.PointingHandCursor : Qt.ArrowCursor
                    onClicked: if (view.interactive && chip.alternatives.length > 0) altPopup.openFor(chip)
                    onContainsMouseChanged: {
                        if (containsMouse) hoverTip.showFor(chip)
                        else if (hoverTip.chip === chip) hoverTip.chip = null
                    }
                }
                Component.onDestruction: if (hoverTip.chip === chip) hoverTip.chip = null
            }
        }
    }

    // One tooltip for all chips, placed by hand: the attached ToolTip opens above its item, which in
    // the Playground is over the prompt.
    ToolTip {
        id: hoverTip
        objectName: "tokenHoverTip"
        property Item chip: null
        visible: chip !== null && !altPopup.visible
        delay: 300
        // Unwrapped lines: as wide as the longest one (a wrapping text would take the window's width).
        contentItem: Label {
            text: hoverTip.text
            font: hoverTip.font
            color: "white"  // on Material's grey tooltip, in both themes
        }
        function showFor(c) {
            let lines = [qsTr("id %1 · p = %2").arg(c.tokenId).arg(view.percent(c.prob))]
            for (let i = 0; i < Math.min(5, c.alternatives.length); ++i) {
                const a = c.alternatives[i]
                lines.push("“" + view.shown(a.text) + "”  " + view.percent(a.prob))
            }
            text = lines.join("\n")
            const below = c.mapToItem(view, 0, c.height + 4)
            const inWindow = c.mapToItem(null, 0, c.height + 4)
            const fitsBelow = !view.Window.window || inWindow.y + implicitHeight < view.Window.height - 8
            x = Math.max(0, Math.min(below.x, view.width - implicitWidth))
            y = fitsBelow ? below.y : below.y - c.height - 8 - implicitHeight
            chip = c
        }
    }

    Popup {
        id: altPopup
        objectName: "alternativesPopup"
        property int row: -1
        property var alternatives: []
        property int chosenId: -1
        property string chosenText
        property double chosenProb: 0
        padding: 8
        width: 260
        function openFor(chip) {
            row = chip.index
            alternatives = chip.alternatives
            chosenId = chip.tokenId
            chosenText = chip.text
            chosenProb = chip.prob
            const p = chip.mapToItem(view, 0, chip.height + 2)
            x = Math.max(0, Math.min(p.x, view.width - width))
            y = p.y
            open()
        }
        background: Rectangle {
            color: Style.surface
            border.color: Style.border
            radius: Style.radius
        }
        contentItem: ColumnLayout {
            spacing: 2
            Label {
                text: qsTr("Chosen: “%1” · %2").arg(view.shown(altPopup.chosenText)).arg(view.percent(altPopup.chosenProb))
                color: Style.text
                font.family: Style.monoFont
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            Label {
                text: qsTr("Alternatives at this position — pick one to continue from it")
                color: Style.textMuted
                font.pixelSize: Style.fontSmall
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Repeater {
                model: altPopup.alternatives
                delegate: ItemDelegate {
                    id: altRow
                    required property var modelData
                    required property int index
                    Layout.fillWidth: true
                    implicitHeight: 30
                    highlighted: modelData.id === altPopup.chosenId
                    onClicked: {
                        altPopup.close()
                        if (modelData.id !== altPopup.chosenId) view.alternativeChosen(altPopup.row, index)
                    }
                    contentItem: RowLayout {
                        spacing: 8
                        Rectangle {
                            color: Style.probColor(altRow.modelData.prob)
                            radius: 3
                            Layout.preferredWidth: Math.max(4, 60 * altRow.modelData.prob)
                            Layout.preferredHeight: 12
                        }
                        Label {
                            text: "“" + view.shown(altRow.modelData.text) + "”"
                            font.family: Style.monoFont
                            color: Style.text
                            elide: Text.ElideRight
                            Layout.fillWidth: true
                        }
                        Label {
                            text: view.percent(altRow.modelData.prob)
                            color: Style.textMuted
                            font.pixelSize: Style.fontSmall
                        }
                    }
                }
            }
        }
    }
}
