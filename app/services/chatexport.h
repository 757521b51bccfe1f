// Chat export and import: Markdown (for reading), JSON in OpenAI's `messages` format (for other tools
// and for training data), and import of that JSON back into a new chat.
//
// Import accepts {"messages": [...]} (optionally with "title") or a bare [...] of {role, content};
// anything else is refused with a message that names the offending element ("messages[3].role: ...").
// Extra keys (name, tool_calls, ...) are ignored; content must be a string (OpenAI's list-of-parts
// form is accepted when every part is {"type": "text", "text": ...}).
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include "chattypes.h"
#include "store/chatstore.h"

// The active path of a chat with its system prompt first (when set).
QString chatToMarkdown(const StoredChat& chat, const QList<StoredMessage>& path);
QByteArray chatToOpenAiJson(const StoredChat& chat, const QList<StoredMessage>& path);

struct ImportedChat {
  QString title;
  QString systemPrompt;      // the leading system messages joined
  QList<ChatTurn> messages;  // user / assistant turns (system messages after the first turn stay in place)
  QString error;             // empty on success
};

// `sourceName` names the file in errors and is the title when the JSON has none.
ImportedChat chatFromOpenAiJson(const QByteArray& json, const QString& sourceName);

// Writes `bytes` atomically (QSaveFile); returns an error message or an empty string.
QString writeFileAtomically(const QString& path, const QByteArray& bytes);
