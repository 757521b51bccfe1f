// LongMessage: how the chat view shows a message too long to lay out whole. Laying out tens of
// thousands of characters (a pasted document, a reply that filled the context) takes the GUI thread
// hundreds of milliseconds each time its delegate is made, so a long message shows its beginning and
// a "Show all" button, and a long reply being written shows its end. What it is cut from is the whole
// text: copy, edit, export, search and the model always use that.
#pragma once

#include <QString>
#include <QVariantList>

namespace longmessage {

// Longer than either: shown cut. Both well past a screenful, so ordinary messages never are.
inline constexpr int kLongChars = 4000;
inline constexpr int kLongLines = 80;
// What a cut message shows: about a screen's worth, ended at a line or a space.
inline constexpr int kShownChars = 1500;
inline constexpr int kShownLines = 30;

bool isLong(const QString& text);

// The first (head) or last (tail) part of `text`, at most `chars` characters and `lines` lines, cut
// at a line end or else a space when one is near, never inside a UTF-16 surrogate pair. The text
// itself when it fits.
QString head(const QString& text, int chars = kShownChars, int lines = kShownLines);
QString tail(const QString& text, int chars = kShownChars, int lines = kShownLines);

// The same over display blocks ([{kind, text, language}], ChatMessageModel::markdownBlocks): whole
// blocks from the start (or the end) while they fit, and the one that does not fit cut, so a code
// block stays a code block. The cut block keeps its whole text as "whole" (its Copy button copies that).
QVariantList headBlocks(const QVariantList& blocks, int chars = kShownChars, int lines = kShownLines);
QVariantList tailBlocks(const QVariantList& blocks, int chars = kShownChars, int lines = kShownLines);

}  // namespace longmessage
