// AppController: the GUI-thread face of the engine. It owns the worker thread and the EngineWorker
// on it, turns the worker's signals into properties that QML binds to, and turns QML's calls into
// queued requests. The UI module exposes it to QML as the `App` singleton; main.cpp owns it.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>
#include <QUrl>
#include <QVariantList>

#include "appsettings.h"     // complete type: it is a Q_PROPERTY
#include "chatcontroller.h"  // complete type: it is a Q_PROPERTY
#include "generationtypes.h"
#include "modelinfo.h"
#include "preferencepairs.h"  // complete type: it is a Q_PROPERTY
#include "rewardscorer.h"     // complete type: it is a Q_PROPERTY
#include "serverservice.h"    // complete type: it is a Q_PROPERTY
#include "trainingjobs.h"  // complete type: it is a Q_PROPERTY

class Database;
class EngineWorker;
class ModelHistoryStore;
class PresetStore;

class AppController : public QObject {
  Q_OBJECT
  Q_PROPERTY(AppSettings* settings READ settings CONSTANT)
  Q_PROPERTY(QString version READ version CONSTANT)
  Q_PROPERTY(QString dataDir READ dataDir CONSTANT)
  // Where the user's own data is kept: the session database (chats, presets, runs' records) and the
  // training runs' folders (trained models, checkpoints). dataDir is the app's read-only resources.
  Q_PROPERTY(QString databasePath READ databasePath CONSTANT)
  Q_PROPERTY(QString runsDir READ runsDir CONSTANT)
  // The Chat page (sessions saved in the ChatStore).
  Q_PROPERTY(ChatController* chat READ chat CONSTANT)
  // Training runs: the queue on its own thread, runs and metrics in the RunStore.
  Q_PROPERTY(TrainingJobs* training READ training CONSTANT)
  // Preference pairs collected with Chat's Compare, for the Train page (list, delete, export).
  Q_PROPERTY(PreferencePairs* preferences READ preferences CONSTANT)
  // The reward model that scores chat replies (AppSettings::rewardModelPath), on its own thread.
  Q_PROPERTY(RewardScorer* rewards READ rewards CONSTANT)
  // The local OpenAI-compatible server (the Server page): its own thread and copy of the served model.
  Q_PROPERTY(ServerService* server READ server CONSTANT)
  // Models opened before, newest first: [{path, name, architecture, format, weights, parameters,
  // contextLength, lastOpened}] from the ModelHistoryStore.
  Q_PROPERTY(QVariantList recentModels READ recentModels NOTIFY recentModelsChanged)
  // Playground presets: [{name, settings}].
  Q_PROPERTY(QVariantList presets READ presets NOTIFY presetsChanged)

  Q_PROPERTY(bool hasModel READ hasModel NOTIFY modelChanged)
  Q_PROPERTY(QString modelName READ modelName NOTIFY modelChanged)
  Q_PROPERTY(QString modelPath READ modelPath NOTIFY modelChanged)
  // The loaded model is the starter model shipped with the app (the first-run note explains it).
  Q_PROPERTY(bool modelIsStarter READ modelIsStarter NOTIFY modelChanged)
  Q_PROPERTY(QString modelInfo READ modelInfo NOTIFY modelChanged)
  Q_PROPERTY(QVariantList modelDetails READ modelDetails NOTIFY modelChanged)
  Q_PROPERTY(bool modelHasTokenizer READ modelHasTokenizer NOTIFY modelChanged)
  Q_PROPERTY(int modelContextLength READ modelContextLength NOTIFY modelChanged)
  // The chat template chats are rendered with ("chatml", "llama3", ..., "plain" for a model without
  // one), and, when the model's own template could not be used, why (empty otherwise).
  Q_PROPERTY(QString chatTemplateName READ chatTemplateName NOTIFY modelChanged)
  Q_PROPERTY(QString chatTemplateNote READ chatTemplateNote NOTIFY modelChanged)
  // Where the open dialogs start: beside the current model, else the home folder.
  Q_PROPERTY(QUrl dialogFolder READ dialogFolder NOTIFY modelChanged)

  Q_PROPERTY(QString backendName READ backendName NOTIFY backendChanged)
  Q_PROPERTY(QString backendReason READ backendReason NOTIFY backendChanged)
  Q_PROPERTY(QString backendDescription READ backendDescription NOTIFY backendChanged)

  Q_PROPERTY(bool loading READ loading NOTIFY loadingChanged)
  Q_PROPERTY(double loadProgress READ loadProgress NOTIFY loadProgressChanged)
  Q_PROPERTY(QString loadStage READ loadStage NOTIFY loadProgressChanged)
  Q_PROPERTY(QString loadingPath READ loadingPath NOTIFY loadProgressChanged)

  Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)
  Q_PROPERTY(QString statusMessage READ statusMessage NOTIFY statusMessageChanged)

  Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
  Q_PROPERTY(QString generationStats READ generationStats NOTIFY generationStatsChanged)
  Q_PROPERTY(QString generationError READ generationError NOTIFY generationStatsChanged)
  // Which output the running (or last) generation writes to: "main", or "A" / "B" when comparing.
  Q_PROPERTY(QString generationLane READ generationLane NOTIFY generatingChanged)
  // Every generation setting with its kind, default, accepted and slider range and label
  // (settingFieldsForQml in generationtypes.h): the sampler panel spells none of them itself.
  Q_PROPERTY(QVariantMap generationSettingFields READ generationSettingFields CONSTANT)
  // The prompt's tokens from the last tokenizePrompt(): [{id, text}], for the chips under the prompt.
  Q_PROPERTY(QVariantList promptTokens READ promptTokens NOTIFY promptTokensChanged)
  // The Inspect page: the newest inspection (an InspectionPtr in a QVariant, see inspectiontypes.h;
  // invalid until the first one arrives), whether one is running, its progress and its last error.
  Q_PROPERTY(QVariant inspection READ inspection NOTIFY inspectionChanged)
  Q_PROPERTY(bool inspecting READ inspecting NOTIFY inspectingChanged)
  Q_PROPERTY(double inspectProgress READ inspectProgress NOTIFY inspectingChanged)
  Q_PROPERTY(QString inspectError READ inspectError NOTIFY inspectingChanged)
  // What the shown inspection is of when it is not the page's own text (a chat message); else empty.
  Q_PROPERTY(QString inspectSource READ inspectSource NOTIFY inspectingChanged)

 public:
  // Starts the worker thread at once; no model is loaded until start() or openModel().
  explicit AppController(QObject* parent = nullptr);
  ~AppController() override;

  // Picks the startup model (see startupmodel.h) and begins loading it.
  void start(const QString& commandLineModelPath = {});
  // Stops generation and loading, and joins the worker thread. Must run before the engine's and
  // Qt's globals are torn down; safe to call twice.
  void shutdown();

  AppSettings* settings() const { return m_settings; }
  QString version() const;
  QString dataDir() const { return m_dataDir; }
  QString databasePath() const;
  QString runsDir() const;
  ChatController* chat() const { return m_chat; }
  TrainingJobs* training() const { return m_training; }
  PreferencePairs* preferences() const { return m_preferences; }
  RewardScorer* rewards() const { return m_rewards; }
  ServerService* server() const { return m_server; }
  // The loaded model's shape for estimates: {parameters, layers, width, heads, vocab, context}; {} when none.
  Q_INVOKABLE QVariantMap modelShape() const;
  // The session database (chats, presets, models, runs) and its problem at startup, if any.
  Database* database() const { return m_database; }
  QVariantList recentModels() const;
  QVariantList presets() const;
  // Saves the Playground's settings under `name` (replacing one of that name); false + lastError on failure.
  Q_INVOKABLE bool savePreset(const QString& name, const QVariantMap& settings);
  Q_INVOKABLE bool deletePreset(const QString& name);
  Q_INVOKABLE void forgetRecentModel(const QString& path);

  bool hasModel() const { return m_model.isValid(); }
  QString modelName() const { return m_model.name; }
  QString modelPath() const { return m_model.path; }
  bool modelIsStarter() const;
  QString modelInfo() const { return m_model.summary(); }
  QVariantList modelDetails() const { return m_model.details(); }
  bool modelHasTokenizer() const { return m_model.hasTokenizer; }
  int modelContextLength() const { return m_model.contextLength; }
  QString chatTemplateName() const { return m_model.chatTemplate; }
  QString chatTemplateNote() const { return m_model.chatTemplateNote; }
  QUrl dialogFolder() const;

  QString backendName() const { return m_backendName; }
  QString backendReason() const { return m_backendReason; }
  QString backendDescription() const { return m_backendDescription; }

  bool loading() const { return m_loadsInFlight > 0; }
  double loadProgress() const { return m_loadProgress; }
  QString loadStage() const { return m_loadStage; }
  QString loadingPath() const { return m_loadingPath; }

  QString lastError() const { return m_lastError; }
  QString statusMessage() const { return m_statusMessage; }

  bool generating() const { return m_generating; }
  QString generationStats() const { return m_generationStats; }
  QString generationError() const { return m_generationError; }
  QString generationLane() const { return m_lane; }
  QVariantMap generationSettingFields() const { return settingFieldsForQml(); }
  QVariantList promptTokens() const { return m_promptTokens; }
  QVariant inspection() const { return m_inspection; }
  bool inspecting() const { return m_inspectRequest != 0; }
  double inspectProgress() const { return m_inspectProgress; }
  QString inspectError() const { return m_inspectError; }
  QString inspectSource() const { return m_inspectSource; }

  // Inspects `text` as the model tokenizes it, or exactly `ids` (e.g. a prompt and its output) when
  // given. The newest request wins: a running one is cancelled (appcontroller_inspect.cpp).
  Q_INVOKABLE void inspectText(const QString& text);
  Q_INVOKABLE void inspectIds(const QVariantList& ids);
  Q_INVOKABLE void cancelInspect();
  // The current inspection as a snapshot file (engine/inspect/snapshot.h), and back: it reopens
  // without the model and without recomputing. Accept a path or a file: URL; return "" or the error.
  Q_INVOKABLE QString saveInspection(const QString& pathOrUrl) const;
  Q_INVOKABLE QString openInspection(const QString& pathOrUrl);

  // Accepts a local path or a file: URL (what QML's file dialogs return). A load already running
  // is cancelled: the newest request wins.
  Q_INVOKABLE void openModel(const QString& pathOrUrl);
  // The same, shown under `displayName` (a trained run's name rather than its folder's "run-12").
  Q_INVOKABLE void openModelAs(const QString& pathOrUrl, const QString& displayName);
  Q_INVOKABLE void cancelLoad();
  // Loads the current model again, e.g. to apply a new thread count.
  Q_INVOKABLE void reloadModel();
  Q_INVOKABLE void clearError();

  // Every sampler setting as a JS object keyed as the settings' field table (settingsFromMap; keys it
  // leaves out keep the Playground's defaults). The per-token records arrive through
  // tokensArrived(lane, ...), which a TokenStreamModel with that lane takes in; the end through
  // generationDone.
  Q_INVOKABLE void generateWith(const QString& prompt, const QVariantMap& settings,
                                const QString& lane = QStringLiteral("main"));
  // Goes on after `forcedIds` (the output so far with one token swapped for an alternative).
  Q_INVOKABLE void continueWith(const QString& prompt, const QVariantList& forcedIds, const QVariantMap& settings,
                                const QString& lane = QStringLiteral("main"));
  // The Playground's defaults as a JS object (settingsToMap(playgroundDefaults())).
  Q_INVOKABLE QVariantMap defaultGenerationSettings() const;
  // The Playground's chat mode (appcontroller_playgroundchat.cpp): `turns` as [{role, content}]
  // rendered with the model's chat template, special tokens only from its markup, the reply
  // streaming per token into `lane` like generateWith. continueChatWith goes on after `forcedIds`
  // (the reply so far with one token swapped), as continueWith does.
  Q_INVOKABLE void generateChatWith(const QVariantList& turns, const QVariantMap& settings,
                                    const QString& lane = QStringLiteral("main"));
  Q_INVOKABLE void continueChatWith(const QVariantList& turns, const QVariantList& forcedIds,
                                    const QVariantMap& settings, const QString& lane = QStringLiteral("main"));
  // Like tokenizePrompt, for the rendered chat: promptTokens then holds its pieces, markup included,
  // each with `special` set for a control token.
  Q_INVOKABLE void tokenizeChat(const QVariantList& turns);
  // Asynchronous: promptTokens changes when the worker has answered (the newest request wins).
  Q_INVOKABLE void tokenizePrompt(const QString& text);
  Q_INVOKABLE void stopGeneration();
  Q_INVOKABLE void clearGeneration();

 Q_SIGNALS:
  // Commands to the worker (queued across the thread boundary).
  void prepareBackendRequested(int threads);
  void loadModelRequested(const QString& path, int threads, quint64 ticket);
  void generateRequested(const QString& prompt, const GenerationSettings& settings, quint64 ticket);
  void continueRequested(const QString& prompt, const QList<int>& forcedIds, const GenerationSettings& settings,
                         quint64 ticket);
  void tokenizeRequested(const QString& text, quint64 requestId);
  void chatGenerateRequested(const QList<ChatTurn>& turns, const QString& continuation,
                             const GenerationSettings& settings, quint64 ticket);
  void chatCountRequested(const QList<ChatTurn>& turns, quint64 requestId);
  void playgroundChatRequested(const QList<ChatTurn>& turns, const QList<int>& forcedIds,
                               const GenerationSettings& settings, quint64 ticket);
  void tokenizeChatRequested(const QList<ChatTurn>& turns, quint64 requestId);
  void recentModelsChanged();
  void presetsChanged();

  // Per-token records of the running Playground generation, in the worker's batches.
  void tokensArrived(const QString& lane, const QList<TokenRecord>& tokens);
  // Ends every generateWith/continueWith: stats as {promptTokens, generatedTokens, tokensPerSecond,
  // timeToFirstTokenMs, finishReason, seed, summary}; error empty on success.
  void generationDone(const QString& lane, const QVariantMap& stats, const QString& error);
  void promptTokensChanged();
  void inspectRequested(const QString& text, const QList<int>& ids, quint64 requestId);
  void inspectChatRequested(const QList<ChatTurn>& turns, const QString& continuation, quint64 requestId);
  void inspectionChanged();
  void inspectingChanged();

  void modelChanged();
  void backendChanged();
  void loadingChanged();
  void loadProgressChanged();
  void lastErrorChanged();
  void statusMessageChanged();
  void generatingChanged();
  void generationStatsChanged();

 private:
  void handleBackendChanged(const QString& name, const QString& reason, const QString& description);
  void handleLoadStarted(const QString& path);
  void handleLoadProgress(double fraction, const QString& stage);
  void handleModelLoaded(const ModelInfo& info);
  void handleLoadFailed(const QString& message);
  void handleLoadCancelled(const QString& path);
  void finishOneLoad();
  void setLastError(const QString& message);
  void setStatusMessage(const QString& message);
  void setGenerating(bool generating);
  void beginGeneration(const QString& lane);
  void connectChat();
  bool chatLane() const { return m_lane == QLatin1String("chat"); }
  void connectInspection();      // called once by the constructor
  void connectPlaygroundChat();  // called once by the constructor
  void requestInspection(const QString& text, const QList<int>& ids);
  void connectChatInspection();  // called by connectChat: Inspect on a chat message
  void connectRewards();         // the chat's reward scores (appcontroller_rewards.cpp)
  // Shows a snapshot's bytes as the current inspection; returns why it could not, empty on success.
  QString showInspectionBytes(const QByteArray& bytes, const QString& source);

  AppSettings* m_settings;  // owned (child)
  QString m_dataDir;
  QThread m_thread;
  EngineWorker* m_worker;              // lives on m_thread; deleted there when the thread finishes
  Database* m_database;                // owned (child); the stores below and those of m_chat and m_training use it
  PresetStore* m_presets;              // owned (child)
  ModelHistoryStore* m_modelHistory;   // owned (child)
  ChatController* m_chat;              // owned (child)
  TrainingJobs* m_training = nullptr;        // owned (child)
  PreferencePairs* m_preferences = nullptr;  // owned (child)
  RewardScorer* m_rewards = nullptr;         // owned (child)
  ServerService* m_server = nullptr;         // owned (child)
  bool m_shutDown = false;

  ModelInfo m_model;
  QString m_modelOrigin;  // why the pending load was chosen ("starter model"), for the status line
  QString m_startupFallback;  // opened if the startup model fails to load (StartupModel::fallback)
  QString m_displayNamePath, m_displayName;  // openModelAs: the name the model at that path is shown under
  QString m_backendName, m_backendReason, m_backendDescription;

  int m_loadsInFlight = 0;
  bool m_cancelRequested = false;
  double m_loadProgress = 0;
  QString m_loadStage, m_loadingPath;
  QString m_lastError, m_statusMessage;

  bool m_generating = false;
  QString m_generationStats, m_generationError;
  QString m_lane = QStringLiteral("main");
  QVariantList m_promptTokens;
  quint64 m_tokenizeRequest = 0;
  QVariant m_inspection;
  quint64 m_inspectRequest = 0;   // the running request, 0 when idle
  qint64 m_inspectMessageId = 0;  // the chat message the running request inspects, 0 for none
  QString m_inspectSource;
  double m_inspectProgress = 0;
  QString m_inspectError;
};
