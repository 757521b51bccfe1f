// ChatController: the Chat page's state and commands, on the GUI thread. It owns the sidebar and
// message models, keeps them in step with the ChatStore, and turns send / regenerate / continue /
// edit into generation requests.
//
// It knows no engine: generation leaves as generateRequested / stopRequested and results come back
// through the handleXxx slots (AppController wires them to the EngineWorker; tests to a fake).
//
// Persistence: the user's message is saved when sent; the reply's row is created when generation
// starts and its text is written as it streams (at most every flushIntervalMs, one transaction each),
// so a crash loses at most the last fraction of a second of the reply in flight. A reply left
// incomplete by a crash is shown as such when the chat is opened again.
//
// Compare (chatcontroller_compare.cpp): a second reply to the last user turn, written with the last
// reply's settings and another seed, is kept in memory beside the chat until the user picks the
// better one. The pick replaces the chat's reply with the chosen text and saves the pair in the
// PreferenceStore, in one transaction; dismissing (or a crash) leaves the chat as it was.
//
// Reward scores (chatcontroller_rewards.cpp): with a reward model chosen (setRewardModel), an assistant
// message can be scored (scoreMessage), and both replies of a comparison are. Requests leave as
// scoreRequested and come back through handleScore / handleScoreFailed (AppController wires them to the
// RewardScorer). Scores live in memory for the session, by message id, each with the conversation and reply
// it was computed on: a message whose text or conversation has changed since shows no score.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QStringList>
#include <QTimer>
#include <QVariantMap>

#include "chatlistmodel.h"
#include "chatmessagemodel.h"
#include "chattypes.h"
#include "generationtypes.h"
#include "newestfirstmodel.h"

class ChatStore;
class InspectionStore;
class PreferenceStore;

class ChatController : public QObject {
  Q_OBJECT
  Q_PROPERTY(ChatListModel* chats READ chats CONSTANT)
  Q_PROPERTY(ChatMessageModel* messages READ messages CONSTANT)
  // The same rows, newest first, for the chat view (which lays them out from the bottom up).
  Q_PROPERTY(QAbstractItemModel* messagesNewestFirst READ messagesNewestFirst CONSTANT)
  Q_PROPERTY(qint64 currentChatId READ currentChatId NOTIFY currentChatChanged)
  Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentChatChanged)
  Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY currentChatChanged)
  Q_PROPERTY(QString currentFolder READ currentFolder NOTIFY currentChatChanged)
  Q_PROPERTY(QStringList currentTags READ currentTags NOTIFY currentChatChanged)
  Q_PROPERTY(QStringList folders READ folders NOTIFY foldersChanged)
  Q_PROPERTY(QString folderFilter READ folderFilter WRITE setFolderFilter NOTIFY folderFilterChanged)
  // Every tag on a chat, and the one the sidebar shows chats of (empty: all chats).
  Q_PROPERTY(QStringList tags READ tags NOTIFY tagsChanged)
  Q_PROPERTY(QString tagFilter READ tagFilter WRITE setTagFilter NOTIFY tagFilterChanged)
  Q_PROPERTY(QString searchText READ searchText WRITE setSearchText NOTIFY searchTextChanged)
  Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
  // Sampling settings for new replies (the field table's keys, all of them: chatDefaults() until
  // changed; a write merges and clamps). The table's stored_with_reply ones are saved with each reply.
  // Until the user picks a maxTokens, it follows the model: defaultMaxTokens().
  Q_PROPERTY(QVariantMap generationSettings READ generationSettings WRITE setGenerationSettings NOTIFY
                 generationSettingsChanged)
  // Context use: tokens of the rendered chat (system prompt and template markup included).
  Q_PROPERTY(int contextUsed READ contextUsed NOTIFY contextChanged)
  Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY contextChanged)
  // Non-empty when the chat is near or past the model's context; says what will happen (the oldest
  // messages are left out of what the model reads, never out of the chat).
  Q_PROPERTY(QString contextWarning READ contextWarning NOTIFY contextChanged)
  Q_PROPERTY(bool contextExceeded READ contextExceeded NOTIFY contextChanged)
  Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)
  // The store's startup problem (read-only, locked, recovered from corruption), for a banner.
  Q_PROPERTY(QString storageProblem READ storageProblem NOTIFY storageProblemChanged)
  // The chat deleted last, while its undo is still possible.
  Q_PROPERTY(QString deletedTitle READ deletedTitle NOTIFY deletedChanged)
  // What undoDelete() would bring back, in words ("Deleted “Trip plans”.", "Deleted a message and
  // the 2 replies below it."); empty when there is nothing to undo.
  Q_PROPERTY(QString undoText READ undoText NOTIFY deletedChanged)
  // A search hit opened with openSearchHit(): the message to scroll to and highlight (0: none), and
  // its row in `messages` (-1 when it is not shown).
  Q_PROPERTY(qint64 highlightedMessageId READ highlightedMessageId NOTIFY highlightChanged)
  Q_PROPERTY(int highlightedRow READ highlightedRow NOTIFY highlightChanged)
  // Compare: a comparison is open (its second reply writing or written, waiting for a pick); the
  // reply compared ("A") and the second one ("B"), their texts and one-line stats.
  Q_PROPERTY(bool comparing READ comparing NOTIFY comparisonChanged)
  Q_PROPERTY(bool compareWriting READ compareWriting NOTIFY comparisonChanged)
  Q_PROPERTY(qint64 compareMessageId READ compareMessageId NOTIFY comparisonChanged)
  Q_PROPERTY(QString compareOriginal READ compareOriginal NOTIFY comparisonChanged)
  Q_PROPERTY(QString compareAlternative READ compareAlternative NOTIFY compareAlternativeChanged)
  Q_PROPERTY(QString compareOriginalStats READ compareOriginalStats NOTIFY comparisonChanged)
  Q_PROPERTY(QString compareAlternativeStats READ compareAlternativeStats NOTIFY comparisonChanged)
  // Reward scores: the reward model's name (empty: none chosen, nothing can be scored); the open chat's
  // scores by message id (as a string): {score, text ("+0.42"), pending, error, turnsLeftOut}; and the
  // scores of the comparison's two replies ({} until asked), in the same shape.
  Q_PROPERTY(QString rewardModelName READ rewardModelName NOTIFY rewardModelChanged)
  Q_PROPERTY(QVariantMap rewardScores READ rewardScores NOTIFY rewardScoresChanged)
  Q_PROPERTY(QVariantMap compareOriginalScore READ compareOriginalScore NOTIFY rewardScoresChanged)
  Q_PROPERTY(QVariantMap compareAlternativeScore READ compareAlternativeScore NOTIFY rewardScoresChanged)

 public:
  // The stores must outlive this object; chats reads and writes the chats, inspections the snapshots.
  ChatController(ChatStore* chats, InspectionStore* inspections, QObject* parent = nullptr);
  ChatStore* store() const { return m_store; }

  ChatListModel* chats() { return &m_chats; }
  ChatMessageModel* messages() { return &m_messages; }
  QAbstractItemModel* messagesNewestFirst() { return &m_newestFirst; }
  qint64 currentChatId() const { return m_chatId; }
  QString currentTitle() const { return m_chat.title; }
  QString systemPrompt() const { return m_chat.systemPrompt; }
  void setSystemPrompt(const QString& text);
  QString currentFolder() const { return m_chat.folder; }
  QStringList currentTags() const { return m_chat.tags; }
  QStringList folders() const { return m_folders; }
  QString folderFilter() const { return m_folderFilter; }
  void setFolderFilter(const QString& folder);
  QStringList tags() const { return m_tags; }
  QString tagFilter() const { return m_tagFilter; }
  void setTagFilter(const QString& tag);
  QString searchText() const { return m_searchText; }
  void setSearchText(const QString& text);
  bool generating() const { return m_generating; }
  QVariantMap generationSettings() const { return m_settings; }
  void setGenerationSettings(const QVariantMap& settings);
  int contextUsed() const { return m_contextUsed; }
  int contextLength() const { return m_contextLength; }
  void setContextLength(int tokens);
  QString contextWarning() const;
  // maxTokens for replies until the user picks one: 256, or a quarter of the context if less.
  int defaultMaxTokens() const;
  // The settings that differ from the Chat page's defaults (maxTokens only when the user picked it):
  // what is kept between sessions. restoreGenerationSettings() takes them back.
  QVariantMap changedGenerationSettings() const;
  void restoreGenerationSettings(const QVariantMap& changed);
  bool contextExceeded() const { return m_contextLength > 0 && m_contextUsed >= m_contextLength; }
  QString lastError() const { return m_lastError; }
  QString storageProblem() const;
  QString deletedTitle() const { return m_deleted.title; }
  QString undoText() const;
  qint64 highlightedMessageId() const { return m_highlightId; }
  int highlightedRow() const { return m_highlightId ? m_messages.rowOf(m_highlightId) : -1; }
  bool comparing() const { return m_compare.messageId != 0; }
  bool compareWriting() const { return comparing() && m_compareInFlight; }
  qint64 compareMessageId() const { return m_compare.messageId; }
  QString compareOriginal() const { return m_compare.original; }
  QString compareAlternative() const { return m_compare.alternative; }
  QString compareOriginalStats() const;
  QString compareAlternativeStats() const;
  QString rewardModelName() const { return m_rewardModel; }
  QVariantMap rewardScores() const { return m_scoreView; }
  QVariantMap compareOriginalScore() const;
  QVariantMap compareAlternativeScore() const;

  // The reward model that scores replies, by name (empty: none). Another model forgets every score; with a
  // comparison open, both replies are scored at once.
  void setRewardModel(const QString& name);

  // Where compared pairs are saved (Compare is refused without one), and the name of the model that
  // writes the replies, recorded with each pair. The store must outlive this object.
  void setPreferenceStore(PreferenceStore* store) { m_preferences = store; }
  void setModelName(const QString& name) { m_modelName = name; }

  // How often a streaming reply is written to the store. The text is shown as it arrives (the worker
  // already gathers it per frame); only the database writes are spaced out, one transaction each.
  void setFlushInterval(int ms) { m_flushMs = ms; }
  // Writes the text of the reply in flight now (at quit: the engine's last pieces would otherwise
  // wait for the next flush, which never comes).
  void saveInFlight() { flushStream(true); }

  // Sidebar.
  Q_INVOKABLE qint64 newChat();
  Q_INVOKABLE void selectChat(qint64 chatId);
  Q_INVOKABLE void renameChat(qint64 chatId, const QString& title);
  Q_INVOKABLE void setChatFolder(qint64 chatId, const QString& folder);
  Q_INVOKABLE void setChatTags(qint64 chatId, const QString& commaSeparated);
  // Hides the chat at once; undoDelete() brings it back until the next delete or finalizeDelete().
  Q_INVOKABLE void deleteChat(qint64 chatId);
  // Brings back the chat or message deleted last (one undo at a time, like a mail client).
  Q_INVOKABLE void undoDelete();
  Q_INVOKABLE void finalizeDelete();
  // A search hit: opens its chat on the branch that holds the message and highlights it there
  // (messageId 0: a title hit, the chat just opens).
  Q_INVOKABLE void openSearchHit(qint64 chatId, qint64 messageId);
  Q_INVOKABLE void clearHighlight();
  // A long message shown whole, or cut again (ChatMessageModel, longmessage.h): the chat view's
  // "Show all" / "Show less".
  Q_INVOKABLE void setMessageExpanded(qint64 messageId, bool expanded);

  // Conversation. Each returns false (and sets lastError) when it cannot start.
  Q_INVOKABLE bool send(const QString& text);
  Q_INVOKABLE void stop();
  // A new reply in place of this assistant message (a sibling), or to this user message.
  Q_INVOKABLE bool regenerate(qint64 messageId);
  // Generates more of this (last) assistant reply, appending to it.
  Q_INVOKABLE bool continueReply(qint64 messageId);
  // Edit = branch: the new text becomes a sibling, the original stays one arrow away. An edited user
  // message gets a new reply; an edited assistant message is just kept.
  Q_INVOKABLE bool editMessage(qint64 messageId, const QString& text);
  // The ‹ › arrows: delta -1 / +1 among the message's siblings.
  Q_INVOKABLE void switchSibling(qint64 messageId, int delta);
  // Deletes the message and the replies below it; undoDelete() restores them exactly (ids, order,
  // chosen branches) until the next delete, finalizeDelete() or a new message in the chat.
  Q_INVOKABLE void deleteMessage(qint64 messageId);
  Q_INVOKABLE void clearError();

  // Compare (see the top of this file). compareReply writes a second reply to the user turn that this
  // reply (the chat's last message) answers; compareLastReply does it for the chat's last reply.
  // keepComparison("A" or "B", text): that side is the better one; `text` is its text as kept (edited
  // or not; empty: as written). dismissComparison stops the second reply if it is still being written
  // and forgets it. Each returns false, with lastError set, when it cannot.
  Q_INVOKABLE bool compareReply(qint64 messageId);
  Q_INVOKABLE bool compareLastReply();
  Q_INVOKABLE bool keepComparison(const QString& side, const QString& text = {});
  Q_INVOKABLE void dismissComparison();

  // Reward scores (see the top of this file). scoreMessage scores this assistant message (the open chat's,
  // finished) against the conversation above it; scoreLastReply the chat's last reply. Each returns false,
  // with lastError set, when it cannot.
  Q_INVOKABLE bool scoreMessage(qint64 messageId);
  Q_INVOKABLE bool scoreLastReply();

  // Inspect: the conversation up to and including this message, as the model reads it. A snapshot
  // saved with the message is handed out at once (inspectionStored); otherwise inspectRequested asks
  // the engine, and the result comes back through storeInspection. Returns false (lastError set)
  // when the message is not in the open chat or the chat is still being written.
  Q_INVOKABLE bool inspectMessage(qint64 messageId);
  // Saves a finished inspection with its message (a later inspectMessage opens it without the model).
  bool storeInspection(qint64 messageId, const QByteArray& blob, const QString& model, int tokenCount);

  // Files. Accept local paths or file: URLs; return an error message, empty on success.
  Q_INVOKABLE QString exportMarkdown(const QString& pathOrUrl);
  Q_INVOKABLE QString exportJson(const QString& pathOrUrl);
  Q_INVOKABLE QString importJson(const QString& pathOrUrl);

  // The active path as the worker needs it: system prompt first, then every message.
  QList<ChatTurn> turnsForCurrentChat() const;

 public Q_SLOTS:
  // From the engine side, for the request this controller issued last.
  void handleGenerationStarted();
  void handleText(const QString& text);
  void handleFinished(const GenerationStats& stats);
  void handleFailed(const QString& message);
  void handleTokenCount(quint64 requestId, int tokens);
  // The model changed: counts are stale (another tokenizer, another template).
  void handleModelChanged(int contextLength);
  // The engine left this many of the oldest turns out of the reply's prompt to fit the context.
  void handleTurnsLeftOut(int turns);
  // The answer to scoreRequested `requestId`: the reward, and how many of the oldest turns the reward
  // model left out to fit its context.
  void handleScore(quint64 requestId, double score, int turnsLeftOut);
  void handleScoreFailed(quint64 requestId, const QString& message);

 Q_SIGNALS:
  // `continuation`: text of the assistant turn so far (continue); empty for a new reply.
  void generateRequested(const QList<ChatTurn>& turns, const QString& continuation, const GenerationSettings& settings);
  void stopRequested();
  void countTokensRequested(const QList<ChatTurn>& turns, quint64 requestId);

  void currentChatChanged();
  void foldersChanged();
  void folderFilterChanged();
  void tagsChanged();
  void tagFilterChanged();
  void highlightChanged();
  void searchTextChanged();
  void generatingChanged();
  void generationSettingsChanged();
  void contextChanged();
  void lastErrorChanged();
  void storageProblemChanged();
  void deletedChanged();
  // Inspect (inspectMessage): the message's saved snapshot, or a request to inspect it. For a reply
  // `turns` end before it and `continuation` is its text (how the model produced it).
  void inspectionStored(qint64 messageId, const QByteArray& blob);
  void inspectRequested(qint64 messageId, const QList<ChatTurn>& turns, const QString& continuation);
  // A reply finished (stats empty and error set when it failed).
  void replyFinished(qint64 messageId, const QString& error);
  void comparisonChanged();
  void compareAlternativeChanged();
  // A comparison ended with a pick: the pair's id in the PreferenceStore.
  void preferencePairSaved(qint64 pairId);
  // Reward scores: a score of `reply` to `prompt` (system prompt first, ending with the user turn) is wanted.
  void scoreRequested(quint64 requestId, const QList<ChatTurn>& prompt, const QString& reply);
  void rewardModelChanged();
  void rewardScoresChanged();

 private:
  void reloadChats();
  void appendMessageRow(qint64 messageId);
  void reloadMessages();
  void setCurrentChat(qint64 chatId);
  // A new message ends the undo of a deleted one: its id may be given to the new message.
  void dropMessageUndo();
  void setError(const QString& message);
  void setGenerating(bool on);
  bool startReply(qint64 parentId, qint64 continueId);
  void flushStream(bool force);
  void requestTokenCount();
  // Sets maxTokens to defaultMaxTokens() unless the user picked one.
  void followDefaultMaxTokens();
  QString localPath(const QString& pathOrUrl) const;
  // Compare: the second reply's results (from the handleXxx slots while it is being written), and
  // the refusal of commands that would change the chat under an open comparison.
  void handleComparisonText(const QString& text);
  void handleComparisonFinished(const GenerationStats& stats);
  void handleComparisonFailed(const QString& message);
  bool refuseWhileComparing();
  void closeComparison();
  // Reward scores: asks for the score of `reply` to `prompt`, kept under `key` (a message id; kCompareB
  // for the comparison's second reply) unless a score of that text and conversation is already kept or on
  // its way. refreshScores rebuilds rewardScores from the rows shown (after the chat or a message changed).
  void requestScore(qint64 key, const QList<ChatTurn>& prompt, const QString& reply);
  // notify: emit rewardScoresChanged even when the rows' scores are as they were (a comparison's changed).
  void refreshScores(bool notify = false);
  void scoreComparison();
  QVariantMap scoreEntry(qint64 key, const QList<ChatTurn>& prompt, const QString& reply) const;

  ChatStore* m_store;
  InspectionStore* m_inspections;
  ChatListModel m_chats;
  ChatMessageModel m_messages;
  NewestFirstModel m_newestFirst;
  qint64 m_chatId = 0;
  StoredChat m_chat;
  QStringList m_folders;
  QString m_folderFilter, m_searchText;
  QStringList m_tags;
  QString m_tagFilter;
  qint64 m_highlightId = 0;
  QVariantMap m_settings;
  QString m_lastError;
  StoredChat m_deleted;
  DeletedMessages m_deletedMessages;

  bool m_generating = false;
  qint64 m_replyId = 0;  // the assistant message being written
  qint64 m_replyChatId = 0;
  QString m_replyText;        // its whole text so far
  bool m_replyDirty = false;  // text not yet written to the store
  QVariantMap m_replySettings;
  int m_replyTurnsLeftOut = 0;  // turns of the chat the reply's prompt left out (handleTurnsLeftOut)
  QElapsedTimer m_sinceFlush;
  QTimer m_flushTimer;
  int m_flushMs = 250;

  int m_contextUsed = 0;
  int m_contextLength = 0;
  bool m_maxTokensChosen = false;  // the user set maxTokens; until then it follows defaultMaxTokens()
  quint64 m_countRequest = 0;
  QTimer m_countTimer;  // coalesces the recounts of quick edits

  // The open comparison (messageId 0: none).
  struct Comparison {
    qint64 messageId = 0;  // "A": the chat's last reply
    qint64 chatId = 0;
    QList<ChatTurn> prompt;  // the turns both replies answer (system prompt first), ending with the user turn
    QString model;
    QString original;  // A's text, stats and settings as stored
    QVariantMap originalStats, originalSettings;
    QString alternative;  // "B": the second reply, as it streams in
    QVariantMap alternativeStats, alternativeSettings;
  };
  Comparison m_compare;
  // The second reply's generation has not answered yet. It outlives a dismissed comparison until the
  // engine confirms the stop, so that its last pieces are not taken for another reply's.
  bool m_compareInFlight = false;
  PreferenceStore* m_preferences = nullptr;
  QString m_modelName;

  // Reward scores by message id (kCompareB: the comparison's second reply), each with the fingerprint of
  // the conversation and reply it is for; the requests on their way, by number.
  struct RewardEntry {
    size_t fingerprint = 0;
    bool pending = false;
    double score = 0;
    int turnsLeftOut = 0;
    QString error;
  };
  static constexpr qint64 kCompareB = -1;
  QString m_rewardModel;
  QHash<qint64, RewardEntry> m_rewardScores;
  QHash<quint64, std::pair<qint64, size_t>> m_scoreRequests;  // request -> (key, fingerprint)
  quint64 m_nextScoreRequest = 0;
  QVariantMap m_scoreView;
};
