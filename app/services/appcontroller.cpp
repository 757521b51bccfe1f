// AppController: wiring between QML and the EngineWorker thread.
#include "appcontroller.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QUrl>

#include <utility>

#include "appsettings.h"
#include "engineworker.h"
#include "startupmodel.h"
#include "store/apikeystore.h"
#include "store/serverrequeststore.h"
#include "store/chatstore.h"
#include "store/database.h"
#include "store/inspectionstore.h"
#include "store/modelhistorystore.h"
#include "store/preferencestore.h"
#include "store/presetstore.h"
#include "store/runstore.h"

AppController::AppController(QObject* parent)
    : QObject(parent),
      m_settings(new AppSettings(this)),
      m_dataDir(workbenchDataDir()),
      m_worker(new EngineWorker),
      m_database(new Database(this)),
      m_presets(new PresetStore(*m_database, this)),
      m_modelHistory(new ModelHistoryStore(*m_database, this)),
      m_chat(nullptr) {
  // The worker has no parent so it can move; the thread deletes it on its own thread at the end,
  // which is where the engine objects it owns must be destroyed.
  m_worker->moveToThread(&m_thread);
  m_thread.setObjectName(QStringLiteral("engine-worker"));
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);

  // Commands: explicitly queued, they cross to the worker thread.
  connect(this, &AppController::prepareBackendRequested, m_worker, &EngineWorker::prepareBackend, Qt::QueuedConnection);
  connect(this, &AppController::loadModelRequested, m_worker, &EngineWorker::loadModel, Qt::QueuedConnection);
  connect(this, &AppController::generateRequested, m_worker, &EngineWorker::generate, Qt::QueuedConnection);
  connect(this, &AppController::continueRequested, m_worker, &EngineWorker::continueGeneration, Qt::QueuedConnection);
  connect(this, &AppController::tokenizeRequested, m_worker, &EngineWorker::tokenizePrompt, Qt::QueuedConnection);
  connectInspection();
  connectPlaygroundChat();

  // Results: explicitly queued back to the GUI thread.
  connect(m_worker, &EngineWorker::backendChanged, this, &AppController::handleBackendChanged, Qt::QueuedConnection);
  connect(m_worker, &EngineWorker::backendFailed, this, &AppController::setLastError, Qt::QueuedConnection);
  connect(m_worker, &EngineWorker::loadStarted, this, &AppController::handleLoadStarted, Qt::QueuedConnection);
  connect(m_worker, &EngineWorker::loadProgress, this, &AppController::handleLoadProgress, Qt::QueuedConnection);
  connect(m_worker, &EngineWorker::modelLoaded, this, &AppController::handleModelLoaded, Qt::QueuedConnection);
  connect(m_worker, &EngineWorker::loadFailed, this, &AppController::handleLoadFailed, Qt::QueuedConnection);
  connect(m_worker, &EngineWorker::loadCancelled, this, &AppController::handleLoadCancelled, Qt::QueuedConnection);

  connect(
      m_worker, &EngineWorker::generationStarted, this, [this] { setGenerating(true); }, Qt::QueuedConnection);
  // The chat lane asks for text, the Playground's lanes for token records (EngineWorker::Output).
  connect(
      m_worker, &EngineWorker::tokenGenerated, this,
      [this](const QString& text) {
        if (chatLane()) m_chat->handleText(text);
      },
      Qt::QueuedConnection);
  connect(
      m_worker, &EngineWorker::tokensGenerated, this,
      [this](const QList<TokenRecord>& tokens) {
        if (!chatLane()) Q_EMIT tokensArrived(m_lane, tokens);
      },
      Qt::QueuedConnection);
  connect(
      m_worker, &EngineWorker::generationFinished, this,
      [this](const GenerationStats& stats) {
        if (chatLane()) {
          setGenerating(false);
          return m_chat->handleFinished(stats);
        }
        m_generationStats = stats.summary();
        m_generationError.clear();
        Q_EMIT generationStatsChanged();
        setGenerating(false);
        Q_EMIT generationDone(m_lane, stats.toVariantMap(), {});
      },
      Qt::QueuedConnection);
  connect(
      m_worker, &EngineWorker::generationFailed, this,
      [this](const QString& message) {
        if (chatLane()) {
          setGenerating(false);
          return m_chat->handleFailed(message);
        }
        m_generationStats.clear();
        m_generationError = message;
        Q_EMIT generationStatsChanged();
        setGenerating(false);
        Q_EMIT generationDone(m_lane, {}, message);
      },
      Qt::QueuedConnection);
  connect(
      m_worker, &EngineWorker::promptTokenized, this,
      [this](quint64 requestId, const QList<TokenRecord>& pieces) {
        if (requestId != m_tokenizeRequest) return;  // an older request answered late
        m_promptTokens.clear();
        for (const TokenRecord& p : pieces)
          m_promptTokens << QVariantMap{{QStringLiteral("id"), p.id},
                                        {QStringLiteral("text"), p.text},
                                        {QStringLiteral("special"), p.special}};
        Q_EMIT promptTokensChanged();
      },
      Qt::QueuedConnection);

  // WB_SESSION_DB: another database file (tests, or a second profile).
  QString dbPath = qEnvironmentVariable("WB_SESSION_DB");
  if (dbPath.isEmpty())
    dbPath = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/workbench.db");
  m_database->open(dbPath);
  if (!m_database->problem().isEmpty()) qWarning("%s", qPrintable(m_database->problem()));
  m_chat = new ChatController(new ChatStore(*m_database, this), new InspectionStore(*m_database, this), this);
  auto* preferenceStore = new PreferenceStore(*m_database, this);
  m_chat->setPreferenceStore(preferenceStore);
  m_preferences = new PreferencePairs(preferenceStore, this);
  connectChat();
  m_training = new TrainingJobs(new RunStore(*m_database, this), this);
  m_training->recoverInterrupted();  // runs killed with the app become paused, resumable
  connectRewards();
  m_server = new ServerService(m_settings, new ApiKeyStore(*m_database, this),
                               new ServerRequestStore(*m_database, ServerRequestStore::kDefaultCapacity, this), this);
  connect(this, &AppController::modelChanged, m_server, [this] { m_server->setAppModel(m_model.path, m_model.name); });

  m_thread.start();
  Q_EMIT prepareBackendRequested(m_settings->threads());
}

void AppController::connectChat() {
  connect(this, &AppController::chatGenerateRequested, m_worker, &EngineWorker::generateChat, Qt::QueuedConnection);
  connect(this, &AppController::chatCountRequested, m_worker, &EngineWorker::countChatTokens, Qt::QueuedConnection);
  connect(m_worker, &EngineWorker::chatTokensCounted, m_chat, &ChatController::handleTokenCount, Qt::QueuedConnection);
  connect(m_worker, &EngineWorker::chatTurnsLeftOut, m_chat, &ChatController::handleTurnsLeftOut, Qt::QueuedConnection);
  // The Chat page's sampling settings outlive the session.
  m_chat->restoreGenerationSettings(m_settings->chatSampling());
  connect(m_chat, &ChatController::generationSettingsChanged, this,
          [this] { m_settings->setChatSampling(m_chat->changedGenerationSettings()); });
  connect(m_chat, &ChatController::generateRequested, this,
          [this](const QList<ChatTurn>& turns, const QString& continuation, const GenerationSettings& settings) {
            if (m_shutDown) return;
            if (m_generating) {
              m_chat->handleFailed(tr("The engine is busy with another generation; try again when it has finished."));
              return;
            }
            // Not beginGeneration(): the Playground's output stays as it is.
            m_lane = QStringLiteral("chat");
            setGenerating(true);
            Q_EMIT chatGenerateRequested(turns, continuation, settings, m_worker->issueGenerationTicket());
          });
  connect(m_chat, &ChatController::stopRequested, this, &AppController::stopGeneration);
  connect(m_chat, &ChatController::countTokensRequested, this, [this](const QList<ChatTurn>& turns, quint64 id) {
    if (!m_shutDown) Q_EMIT chatCountRequested(turns, id);
  });
  connectChatInspection();
}

QVariantList AppController::recentModels() const {
  QVariantList out;
  for (const RecentModel& m : m_modelHistory->recentModels())
    out << QVariantMap{{QStringLiteral("path"), m.path},
                       {QStringLiteral("name"), m.name},
                       {QStringLiteral("architecture"), m.architecture},
                       {QStringLiteral("format"), m.format},
                       {QStringLiteral("weights"), m.weights},
                       {QStringLiteral("parameters"), ModelInfo::formatCount(m.parameterCount)},
                       {QStringLiteral("contextLength"), m.contextLength},
                       {QStringLiteral("exists"), QFileInfo::exists(m.path)},
                       {QStringLiteral("current"), m.path == m_model.path}};
  return out;
}

void AppController::forgetRecentModel(const QString& path) {
  if (m_modelHistory->forgetModel(path)) Q_EMIT recentModelsChanged();
}

QVariantList AppController::presets() const {
  QVariantList out;
  for (const StoredPreset& p : m_presets->presets())
    out << QVariantMap{{QStringLiteral("name"), p.name}, {QStringLiteral("settings"), p.settings}};
  return out;
}

bool AppController::savePreset(const QString& name, const QVariantMap& settings) {
  if (!m_presets->savePreset(name, settings)) {
    setLastError(m_database->lastError());
    return false;
  }
  Q_EMIT presetsChanged();
  return true;
}

bool AppController::deletePreset(const QString& name) {
  if (!m_presets->deletePreset(name)) {
    setLastError(m_database->lastError());
    return false;
  }
  Q_EMIT presetsChanged();
  return true;
}

AppController::~AppController() { shutdown(); }

QVariantMap AppController::modelShape() const {
  if (!m_model.isValid()) return {};
  return {{QStringLiteral("parameters"), m_model.parameterCount}, {QStringLiteral("layers"), m_model.layers},
          {QStringLiteral("width"), m_model.embeddingSize},       {QStringLiteral("heads"), m_model.heads},
          {QStringLiteral("vocab"), m_model.vocabSize},           {QStringLiteral("context"), m_model.contextLength}};
}

QString AppController::version() const {
#ifdef WB_VERSION
  return QStringLiteral(WB_VERSION);
#else
  return QStringLiteral("dev");
#endif
}

QUrl AppController::dialogFolder() const {
  if (!m_model.isValid()) return QUrl::fromLocalFile(QDir::homePath());
  // A model folder's parent, so that sibling models are one click away.
  return QUrl::fromLocalFile(QFileInfo(m_model.path).absolutePath());
}

void AppController::start(const QString& commandLineModelPath) {
  const StartupModel startup = resolveStartupModel(commandLineModelPath, m_settings->lastModelPath(), m_dataDir);
  if (startup.path.isEmpty()) {
    setStatusMessage(tr("No model loaded. Open a model folder or file to begin."));
    return;
  }
  openModel(startup.path);
  m_modelOrigin = startup.origin;
  m_startupFallback = startup.fallback;
}

void AppController::shutdown() {
  if (m_shutDown) return;
  m_shutDown = true;
  m_chat->saveInFlight();
  // Stop first: the thread can only quit once the running engine call returns.
  m_worker->requestStopGeneration();
  m_worker->requestCancelLoad();
  m_worker->requestCancelInspect();
  m_thread.quit();
  m_thread.wait();
  if (m_training) m_training->shutdown();  // before the store it writes to is destroyed
  if (m_server) m_server->shutdown();      // clients are cut off; the server's thread is joined
}

void AppController::openModel(const QString& pathOrUrl) {
  if (m_shutDown) return;
  const QUrl url(pathOrUrl);
  QString path = url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
  if (path.isEmpty()) return;
  path = QDir::cleanPath(path);
  m_modelOrigin.clear();
  m_startupFallback.clear();  // a model the user opens replaces the startup choice and its fallback
  m_displayName.clear();
  m_displayNamePath.clear();
  // The newest request wins: one running load is enough work for the worker.
  if (loading()) m_worker->requestCancelLoad();
  m_cancelRequested = false;
  const quint64 ticket = m_worker->issueLoadTicket();
  ++m_loadsInFlight;
  m_loadingPath = path;
  m_loadProgress = 0;
  m_loadStage = tr("Waiting for the engine…");
  setLastError({});
  setStatusMessage(tr("Loading %1…").arg(QFileInfo(path).fileName()));
  Q_EMIT loadProgressChanged();
  if (m_loadsInFlight == 1) Q_EMIT loadingChanged();
  Q_EMIT loadModelRequested(path, m_settings->threads(), ticket);
}

void AppController::openModelAs(const QString& pathOrUrl, const QString& displayName) {
  openModel(pathOrUrl);
  if (m_loadingPath.isEmpty()) return;
  m_displayNamePath = m_loadingPath;
  m_displayName = displayName.trimmed();
}

bool AppController::modelIsStarter() const {
  return m_model.isValid() && QDir::cleanPath(m_model.path) == starterModelPath(m_dataDir);
}

QString AppController::databasePath() const { return m_database->path(); }

QString AppController::runsDir() const { return m_training ? m_training->runsRoot() : QString(); }

void AppController::cancelLoad() {
  if (!loading()) return;
  m_worker->requestCancelLoad();
  m_cancelRequested = true;
  m_loadStage = tr("Cancelling…");
  Q_EMIT loadProgressChanged();
}

void AppController::reloadModel() {
  if (m_model.isValid()) openModel(m_model.path);
  else Q_EMIT prepareBackendRequested(m_settings->threads());
}

void AppController::clearError() { setLastError({}); }

void AppController::beginGeneration(const QString& lane) {
  m_lane = lane.isEmpty() ? QStringLiteral("main") : lane;
  m_generationStats.clear();
  m_generationError.clear();
  Q_EMIT generationStatsChanged();
  // Generating is set here, not on the worker's generationStarted, so a second click cannot queue
  // a second request before the first has begun.
  setGenerating(true);
}

void AppController::generateWith(const QString& prompt, const QVariantMap& settings, const QString& lane) {
  if (m_generating || m_shutDown) return;
  beginGeneration(lane);
  Q_EMIT generateRequested(prompt, settingsFromMap(settings, playgroundDefaults()), m_worker->issueGenerationTicket());
}

void AppController::continueWith(const QString& prompt, const QVariantList& forcedIds, const QVariantMap& settings,
                                 const QString& lane) {
  if (m_generating || m_shutDown) return;
  beginGeneration(lane);
  Q_EMIT continueRequested(prompt, tokenIdsFrom(forcedIds), settingsFromMap(settings, playgroundDefaults()),
                           m_worker->issueGenerationTicket());
}

QVariantMap AppController::defaultGenerationSettings() const { return settingsToMap(playgroundDefaults()); }

void AppController::tokenizePrompt(const QString& text) {
  if (m_shutDown) return;
  Q_EMIT tokenizeRequested(text, ++m_tokenizeRequest);
}

void AppController::stopGeneration() {
  if (m_generating) m_worker->requestStopGeneration();
}

void AppController::clearGeneration() {
  if (m_generating) return;
  m_generationStats.clear();
  m_generationError.clear();
  Q_EMIT generationStatsChanged();
}

void AppController::handleBackendChanged(const QString& name, const QString& reason, const QString& description) {
  m_backendName = name;
  m_backendReason = reason;
  m_backendDescription = description;
  Q_EMIT backendChanged();
}

void AppController::handleLoadStarted(const QString& path) {
  m_loadingPath = path;
  Q_EMIT loadProgressChanged();
}

void AppController::handleLoadProgress(double fraction, const QString& stage) {
  // The cancelled load may still report a step or two; keep showing that it is being cancelled.
  if (m_cancelRequested) return;
  m_loadProgress = qBound(0.0, fraction, 1.0);
  m_loadStage = stage;
  Q_EMIT loadProgressChanged();
}

void AppController::handleModelLoaded(const ModelInfo& loaded) {
  ModelInfo info = loaded;
  if (!m_displayName.isEmpty() && QDir::cleanPath(info.path) == m_displayNamePath) info.name = m_displayName;
  m_model = info;
  m_settings->setLastModelPath(info.path);
  m_modelHistory->recordModel(
      {info.path, info.name, info.architecture, info.format, info.weights, info.parameterCount, info.contextLength, 0});
  Q_EMIT modelChanged();
  Q_EMIT recentModelsChanged();
  m_chat->handleModelChanged(info.contextLength);
  m_chat->setModelName(info.name);
  const QString took = info.loadMilliseconds < 1000 ? tr("%1 ms").arg(info.loadMilliseconds)
                                                    : tr("%1 s").arg(info.loadMilliseconds / 1000.0, 0, 'f', 1);
  setStatusMessage(m_modelOrigin.isEmpty() ? tr("Loaded %1 in %2").arg(info.name, took)
                                           : tr("Loaded %1 (%2) in %3").arg(info.name, m_modelOrigin, took));
  finishOneLoad();
}

void AppController::handleLoadFailed(const QString& message) {
  if (!m_startupFallback.isEmpty() && !m_model.isValid() && m_loadsInFlight == 1) {
    // The startup model failed: open the starter model instead, keeping the error in view.
    const QString fallback = std::exchange(m_startupFallback, QString());
    const QString failed = QFileInfo(m_loadingPath).fileName();
    finishOneLoad();
    openModel(fallback);
    m_modelOrigin = tr("starter model, as %1 could not be opened").arg(failed);
    setLastError(message);
    return;
  }
  setLastError(message);
  setStatusMessage(m_model.isValid() ? tr("Loading failed; still using %1.").arg(m_model.name)
                                     : tr("Loading failed; no model is loaded."));
  finishOneLoad();
}

void AppController::handleLoadCancelled(const QString& path) {
  finishOneLoad();
  if (loading()) return;  // superseded by a newer request, which reports for itself
  setStatusMessage(m_model.isValid()
                       ? tr("Loading %1 cancelled; still using %2.").arg(QFileInfo(path).fileName(), m_model.name)
                       : tr("Loading %1 cancelled; no model is loaded.").arg(QFileInfo(path).fileName()));
}

void AppController::finishOneLoad() {
  m_loadsInFlight = qMax(0, m_loadsInFlight - 1);
  if (m_loadsInFlight == 0) {
    m_cancelRequested = false;
    m_loadingPath.clear();
    m_loadStage.clear();
    m_loadProgress = 0;
    Q_EMIT loadProgressChanged();
    Q_EMIT loadingChanged();
  }
}

void AppController::setLastError(const QString& message) {
  if (message == m_lastError) return;
  m_lastError = message;
  Q_EMIT lastErrorChanged();
}

void AppController::setStatusMessage(const QString& message) {
  if (message == m_statusMessage) return;
  m_statusMessage = message;
  Q_EMIT statusMessageChanged();
}

void AppController::setGenerating(bool generating) {
  if (generating == m_generating) return;
  m_generating = generating;
  Q_EMIT generatingChanged();
}
