// ChatMessageModel: the active path of the current chat's message tree, one row per message, as the
// chat view shows it. The reply being generated grows with appendTo(), which emits dataChanged for
// that one row only (never a reset while streaming). A long message is shown cut (longmessage.h)
// unless the reader expanded it; the rows remember that across reloads.
#pragma once

#include <QAbstractListModel>
#include <QList>
#include <QSet>

#include "store/chatstore.h"

class ChatMessageModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum Role {
    MessageIdRole = Qt::UserRole + 1,
    RoleRole,  // "system", "user", "assistant"
    ContentRole,
    CompleteRole,      // false for a reply cut off (stopped by a crash) or still streaming
    StreamingRole,     // true while this reply is being generated
    StatsRole,         // the reply's stats map (empty for user messages)
    StatsTextRole,     // "42 tokens · 18.3 tok/s · first token 95 ms · end of text"
    SettingsTextRole,  // "temperature 0.8 · top-k 40 · top-p 0.95 · min-p 0.05 · seed 1234"
    SiblingIndexRole,  // 0-based position among the alternatives at this point of the tree
    SiblingCountRole,  // how many alternatives (1: no arrows)
    CreatedRole,       // "14:05"
    BlocksRole,        // the shown text split for display: see markdownBlocks()
    ShownTextRole,     // what the view shows of the content: all of it, or its cut part
    CutRole,           // "" (all shown), "head" (a long message, collapsed) or "tail" (a long reply being written)
    LongRole,          // "collapsible": the content is long enough to be cut (longmessage::isLong)
    LengthRole,        // the content's length in characters, for "Show all (12,345 characters)"
  };

  struct Row {
    StoredMessage message;
    int siblingIndex = 0;
    int siblingCount = 1;
    bool streaming = false;
  };

  explicit ChatMessageModel(QObject* parent = nullptr);

  void setRows(const QList<Row>& rows);
  void clear() { setRows({}); }
  // Adds a row at the end (a sent message, a new reply).
  void append(const Row& row);
  // Streaming: more text for one row (the reply being generated).
  void appendTo(int row, const QString& text);
  // Replaces one row's message (finished reply, edited text), keeping its place.
  void updateRow(int row, const StoredMessage& message, bool streaming);
  const Row& rowAt(int row) const { return m_rows[row]; }
  const QList<Row>& rows() const { return m_rows; }
  int rowOf(qint64 messageId) const;
  // A long message shown whole (true) or cut again (false). Kept by id, so a reload keeps it.
  void setExpanded(qint64 messageId, bool expanded);
  bool isExpanded(qint64 messageId) const { return m_expanded.contains(messageId); }

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  // Content as [{kind: "text" | "code", text, language}]: fenced code blocks (``` or ~~~) apart, so
  // the view can give each a monospace box and a copy button while the rest renders as Markdown.
  // A fence still open at the end (a reply streaming in) runs to the end.
  static QVariantList markdownBlocks(const QString& content);
  static QString statsText(const QVariantMap& stats);
  static QString settingsText(const QVariantMap& settings);

 Q_SIGNALS:
  void countChanged();

 private:
  enum class Cut { None, Head, Tail };
  Cut cutOf(const Row& row) const;

  QList<Row> m_rows;
  QSet<qint64> m_expanded;  // long messages the reader chose to see whole (those of the shown rows)
};
