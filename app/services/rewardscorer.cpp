// RewardScorer: loading and scoring on the scorer's thread (see rewardscorer.h).
#include "rewardscorer.h"

#include <QDir>
#include <QFileInfo>
#include <QMetaObject>
#include <QPointer>

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/align/reward_model.h"
#include "engine/model.h"
#include "engine/train/preference_data.h"
#include "localfile.h"
#include "store/runstore.h"

namespace {

std::runtime_error userError(const QString& message) { return std::runtime_error(message.toStdString()); }

std::vector<engine::ChatMessage> toMessages(const QList<ChatTurn>& turns, qsizetype from, bool withSystem) {
  std::vector<engine::ChatMessage> out;
  if (withSystem && !turns.isEmpty() && turns.first().role == QLatin1String("system"))
    out.push_back({turns.first().role.toStdString(), turns.first().content.toStdString()});
  for (qsizetype i = from; i < turns.size(); ++i)
    out.push_back({turns[i].role.toStdString(), turns[i].content.toStdString()});
  return out;
}

}  // namespace

RewardScorer::RewardScorer(QObject* parent)
    : QObject(parent),
      m_worker(new QObject),
      m_model(std::make_shared<std::shared_ptr<engine::RewardModel>>()),
      m_generation(std::make_shared<std::atomic<quint64>>(0)) {
  qRegisterMetaType<RewardScore>();
  m_thread.setObjectName(QStringLiteral("reward-scorer"));
  m_worker->moveToThread(&m_thread);
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  m_thread.start();
}

RewardScorer::~RewardScorer() {
  m_generation->fetch_add(1);  // the jobs still queued are skipped
  m_thread.quit();
  m_thread.wait();
}

QString RewardScorer::modelName() const { return m_path.isEmpty() ? QString() : QFileInfo(m_path).fileName(); }

void RewardScorer::load(const QString& pathOrUrl) {
  QString path = localPathOf(pathOrUrl).trimmed();
  if (!path.isEmpty()) {
    const QFileInfo info(path);
    path = QDir::cleanPath((info.isFile() ? info.absolutePath() : info.absoluteFilePath()));
  }
  const quint64 generation = m_generation->fetch_add(1) + 1;
  m_path = path;
  m_error.clear();
  m_loaded = false;
  m_contextLength = 0;
  m_loading = !path.isEmpty();
  const int threads = m_threads;
  auto held = m_model;
  auto current = m_generation;
  QPointer<RewardScorer> self(this);
  // The old model is released on the worker (the thread that used it), after any job still running.
  QMetaObject::invokeMethod(m_worker, [self, held, current, generation, path, threads] {
    held->reset();
    if (path.isEmpty() || current->load() != generation) return;
    std::shared_ptr<engine::RewardModel> model;
    QString error;
    try {
      model = loadModel(path, threads);
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    if (current->load() != generation) return;
    *held = model;
    const int context = model ? model->model().config().max_seq_len : 0;
    QMetaObject::invokeMethod(
        self.data(),
        [self, generation, error, context] {
          if (!self || self->m_generation->load() != generation) return;
          self->m_loading = false;
          self->m_loaded = error.isEmpty();
          self->m_error = error;
          self->m_contextLength = context;
          Q_EMIT self->stateChanged();
        },
        Qt::QueuedConnection);
  });
  Q_EMIT stateChanged();
}

void RewardScorer::score(quint64 requestId, const QList<ChatTurn>& prompt, const QString& reply) {
  if (m_path.isEmpty() || (!m_loading && !m_loaded)) {
    Q_EMIT scoreFailed(requestId, m_error.isEmpty() ? tr("Choose a reward model first.") : m_error);
    return;
  }
  const quint64 generation = m_generation->load();
  auto held = m_model;
  auto current = m_generation;
  QPointer<RewardScorer> self(this);
  QMetaObject::invokeMethod(m_worker, [self, held, current, generation, requestId, prompt, reply] {
    if (current->load() != generation) return;
    RewardScore score;
    QString error;
    if (!*held) {
      error = tr("The reward model could not be loaded.");
    } else {
      try {
        score = scoreWith(**held, prompt, reply);
      } catch (const std::exception& e) {
        error = QString::fromUtf8(e.what());
      }
    }
    QMetaObject::invokeMethod(
        self.data(),
        [self, generation, requestId, score, error] {
          if (!self || self->m_generation->load() != generation) return;
          if (error.isEmpty()) Q_EMIT self->scored(requestId, score);
          else Q_EMIT self->scoreFailed(requestId, error);
        },
        Qt::QueuedConnection);
  });
}

std::shared_ptr<engine::RewardModel> RewardScorer::loadModel(const QString& path, int threads) {
  const QFileInfo info(path);
  if (!info.exists()) throw userError(tr("%1 does not exist.").arg(path));
  if (!engine::is_reward_model(path.toStdString()))
    throw userError(tr("%1 is not a reward model (its workbench.json does not mark it as one). Train one on the "
                       "Train page with the reward-model recipe, or with `llm-workbench-cli train --recipe reward`.")
                        .arg(QFileInfo(path).fileName()));
  try {
    return std::make_shared<engine::RewardModel>(path.toStdString(), threads);
  } catch (const std::exception& e) {
    throw userError(tr("The reward model in %1 could not be loaded: %2").arg(path, QString::fromUtf8(e.what())));
  }
}

RewardScore RewardScorer::scoreWith(engine::RewardModel& model, const QList<ChatTurn>& prompt, const QString& reply) {
  if (reply.trimmed().isEmpty()) throw userError(tr("An empty reply has no score."));
  if (prompt.isEmpty() || prompt.constLast().role != QLatin1String("user"))
    throw userError(tr("Only a reply to a message of yours can be scored."));
  const engine::Tokenizer& tokenizer = *model.model().tokenizer();
  const int context = model.model().config().max_seq_len;
  const int vocabulary = model.model().config().vocab_size;
  const std::string replyText = reply.toStdString();
  const bool hasSystem = prompt.first().role == QLatin1String("system");

  // Candidates, longest first: every start at a user turn (dropping the exchanges before it), then the
  // last exchange without the system prompt.
  struct Candidate {
    qsizetype from;
    bool withSystem;
  };
  std::vector<Candidate> candidates;
  for (qsizetype i = hasSystem ? 1 : 0; i < prompt.size(); ++i)
    if (prompt[i].role == QLatin1String("user")) candidates.push_back({i, true});
  if (hasSystem) candidates.push_back({prompt.size() - 1, false});

  for (const Candidate& c : candidates) {
    const std::vector<engine::ChatMessage> messages = toMessages(prompt, c.from, c.withSystem);
    const engine::EncodedReply encoded =
        engine::encode_prompt_reply(tokenizer, model.chat_template(), messages, replyText);
    if (static_cast<int64_t>(encoded.ids.size()) > context) continue;
    for (const int32_t id : encoded.ids)
      if (id < 0 || id >= vocabulary)
        throw userError(
            tr("The reward model's tokenizer made token %1, but its weights have only %2 tokens: the tokenizer "
               "in its folder is not the one it was trained with.")
                .arg(id)
                .arg(vocabulary));
    RewardScore out;
    out.score = model.score(messages, replyText);
    out.turnsLeftOut = int(prompt.size() - messages.size());
    out.tokens = int(encoded.ids.size());
    return out;
  }
  throw userError(tr("This reply and the message it answers are longer than the reward model's context (%1 tokens), "
                     "so it cannot read them whole.")
                      .arg(context));
}

QVariantList RewardScorer::trainedRewardModels() const {
  QVariantList out;
  if (!m_runs) return out;
  for (const StoredRun& run : m_runs->runs()) {
    if (run.recipe != QLatin1String("reward") || run.status != QLatin1String("done") || run.outputDir.isEmpty())
      continue;
    if (!engine::is_reward_model(run.outputDir.toStdString())) continue;
    out << QVariantMap{{QStringLiteral("name"), run.name},
                       {QStringLiteral("path"), QDir::cleanPath(run.outputDir)},
                       {QStringLiteral("finished"), run.finishedMs}};
  }
  return out;
}
