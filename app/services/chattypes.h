// ChatTurn: one message of a conversation as it travels to the worker for prompt assembly (role and
// text only: the worker renders them with the model's chat template).
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

struct ChatTurn {
  QString role;  // "system", "user" or "assistant"
  QString content;
};

Q_DECLARE_METATYPE(ChatTurn)
Q_DECLARE_METATYPE(QList<ChatTurn>)
