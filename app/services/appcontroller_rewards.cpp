// AppController: the chat's reward scores -- the RewardScorer that loads the chosen reward model
// (AppSettings::rewardModelPath) and answers the ChatController's score requests.
#include "appcontroller.h"
#include "trainingjobs.h"

void AppController::connectRewards() {
  m_rewards = new RewardScorer(this);
  m_rewards->setThreads(m_settings->threads());
  m_rewards->setRunStore(m_training->store());
  connect(m_settings, &AppSettings::threadsChanged, m_rewards,
          [this] { m_rewards->setThreads(m_settings->threads()); });
  // The setting is the one source of the choice: the scorer follows it, now and when it changes.
  connect(m_settings, &AppSettings::rewardModelPathChanged, m_rewards,
          [this] { m_rewards->load(m_settings->rewardModelPath()); });
  if (!m_settings->rewardModelPath().isEmpty()) m_rewards->load(m_settings->rewardModelPath());

  // Scores are asked of a model once it is ready; any change (another model, a failure) forgets them.
  connect(m_rewards, &RewardScorer::stateChanged, m_chat,
          [this] { m_chat->setRewardModel(m_rewards->ready() ? m_rewards->modelName() : QString()); });
  connect(m_chat, &ChatController::scoreRequested, m_rewards,
          [this](quint64 requestId, const QList<ChatTurn>& prompt, const QString& reply) {
            if (!m_shutDown) m_rewards->score(requestId, prompt, reply);
          });
  connect(m_rewards, &RewardScorer::scored, m_chat, [this](quint64 requestId, const RewardScore& score) {
    m_chat->handleScore(requestId, score.score, score.turnsLeftOut);
  });
  connect(m_rewards, &RewardScorer::scoreFailed, m_chat, &ChatController::handleScoreFailed);
}
