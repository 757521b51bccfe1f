// RewardScorer: a trained reward model (engine::RewardModel, `train --recipe reward`) that scores chat
// replies, on a thread of its own.
//
// The model is loaded and every score computed on the scorer's own worker thread, never on the GUI thread
// and never behind the chat's engine: a score does not wait for a reply being written, nor a reply for a
// score. Requests are answered in order; a load replaces the model, and scores asked of a model that has
// since been replaced (or unloaded) are dropped unanswered -- their requester starts again on the new one.
//
// What a score reads: the conversation up to the reply, rendered with the reward model's own tokenizer and
// chat template (those it was trained with, from workbench.json), so any chat model's replies can be
// scored, whatever its tokenizer. A conversation longer than the reward model's context loses its oldest
// exchanges (whole user turns and the replies to them, the system prompt last) until it fits, and the
// score says how many turns were left out -- as a chat reply's own prompt does. When even the reply and the
// message it answers do not fit, the score is refused: a reward of a cut-off reply would not be the reply's.
//
// Errors are sentences for the user: a folder that is not a reward model, a tokenizer that makes tokens
// the model has no embedding for (a tokenizer that does not belong to the weights), a conversation that
// cannot fit.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QThread>
#include <QVariantList>

#include <atomic>
#include <memory>

#include "chattypes.h"

namespace engine {
class RewardModel;
}

class RunStore;

// One reply's reward, with what the reward model left out to read it.
struct RewardScore {
  float score = 0;
  int turnsLeftOut = 0;  // oldest turns of the conversation the reward model did not read
  int tokens = 0;        // tokens it read (prompt, reply and template)
};

class RewardScorer : public QObject {
  Q_OBJECT
  // The chosen reward model's folder (empty: none), its name, and its state: loading, ready (scores can be
  // asked for) or failed with `error`.
  Q_PROPERTY(QString modelPath READ modelPath NOTIFY stateChanged)
  Q_PROPERTY(QString modelName READ modelName NOTIFY stateChanged)
  Q_PROPERTY(bool loading READ loading NOTIFY stateChanged)
  Q_PROPERTY(bool ready READ ready NOTIFY stateChanged)
  Q_PROPERTY(QString error READ error NOTIFY stateChanged)
  Q_PROPERTY(int contextLength READ contextLength NOTIFY stateChanged)

 public:
  explicit RewardScorer(QObject* parent = nullptr);
  ~RewardScorer() override;  // waits for the score or load in progress (at most one)

  QString modelPath() const { return m_path; }
  QString modelName() const;
  bool loading() const { return m_loading; }
  bool ready() const { return !m_loading && m_loaded; }
  QString error() const { return m_error; }
  int contextLength() const { return m_contextLength; }

  // CPU threads of the next load (0: all cores).
  void setThreads(int threads) { m_threads = threads; }
  // Where the app's training runs are listed (trainedRewardModels); read only. Must outlive this object.
  void setRunStore(const RunStore* runs) { m_runs = runs; }

  // Loads the reward model in `pathOrUrl` (a folder, a file in one, or a file: URL) in the background;
  // stateChanged when it is ready or failed. An empty path unloads.
  Q_INVOKABLE void load(const QString& pathOrUrl);
  Q_INVOKABLE void unload() { load({}); }
  // The reward of `reply` to `prompt` (a conversation ending with a user turn, the system prompt first if
  // any): answered with scored or scoreFailed for `requestId`, unless the model changes first.
  void score(quint64 requestId, const QList<ChatTurn>& prompt, const QString& reply);

  // The app's finished reward-model runs whose folder holds a reward model, newest first:
  // [{name, path, finished (ms since the epoch)}].
  Q_INVOKABLE QVariantList trainedRewardModels() const;

  // The scoring itself, on the calling thread (the worker's; tests). Throws std::exception with a message
  // for the user (see the top of this file).
  static RewardScore scoreWith(engine::RewardModel& model, const QList<ChatTurn>& prompt, const QString& reply);
  // Loads `path`, with the errors worded for the user.
  static std::shared_ptr<engine::RewardModel> loadModel(const QString& path, int threads);

 Q_SIGNALS:
  void stateChanged();
  void scored(quint64 requestId, const RewardScore& score);
  void scoreFailed(quint64 requestId, const QString& message);

 private:
  QThread m_thread;
  QObject* m_worker;  // lives on m_thread; runs the jobs posted to it
  // The model the worker holds, shared with its jobs (only the worker thread touches it).
  std::shared_ptr<std::shared_ptr<engine::RewardModel>> m_model;
  // Numbers the loads; a job of another number than the newest is skipped (the worker thread reads it).
  std::shared_ptr<std::atomic<quint64>> m_generation;
  QString m_path;
  QString m_error;
  bool m_loading = false;
  bool m_loaded = false;
  int m_contextLength = 0;
  int m_threads = 0;
  const RunStore* m_runs = nullptr;
};

Q_DECLARE_METATYPE(RewardScore)
