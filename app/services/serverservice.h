// ServerService: the Server page's core. Starts and stops the local OpenAI-compatible server (ApiServer) over
// the model loaded in the app or a chosen one, keeps its settings (AppSettings) and API keys (ApiKeyStore,
// hashed), and shows what it does: state, URL, counters, tokens/s, the last requests, and ready-to-run examples.
//
// The served model is a second copy, loaded by the server's own thread (ServerHost), not the chat's
// EngineWorker model. Sharing would tie the two together in ways a user would feel: the worker replaces its
// model whenever another one is opened (the server's would vanish under its clients), and a backend's thread
// pool or CUDA stream is driven by one thread at a time, so every chat reply and every server step would have
// to take turns through one lock, a long chat reply stalling API clients and the reverse. A copy costs the
// weights' memory once more, which for the models this app runs is the cheaper side; it also lets the app
// serve one model while chatting with another, as LM Studio and Ollama do.
//
// Invariants
// - The GUI thread never waits for the engine, except in shutdown() (app quit), which must.
// - Without a key (requireKey false) the server may only listen on a loopback address.
// - A key is shown once, by createKey's return value; revoking it refuses it from the next request on.
// - Every setting is saved as it changes (AppSettings::serverSettings).
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPair>
#include <QStringList>
#include <QThread>
#include <QVariantList>

#include <memory>

#include "apikeys.h"
#include "serverrequestlog.h"  // complete type: it is a Q_PROPERTY

class AppSettings;
class ApiKeyStore;
class ServerHost;
class ServerRequestStore;

class ServerService : public QObject {
  Q_OBJECT
  // Settings (persisted). host: an IP address; contextTokens 0: the model's context; modelPath empty: the
  // model loaded in the app.
  Q_PROPERTY(QString host READ host WRITE setHost NOTIFY settingsChanged)
  Q_PROPERTY(int port READ port WRITE setPort NOTIFY settingsChanged)
  Q_PROPERTY(int parallel READ parallel WRITE setParallel NOTIFY settingsChanged)
  Q_PROPERTY(int queueSize READ queueSize WRITE setQueueSize NOTIFY settingsChanged)
  Q_PROPERTY(int contextTokens READ contextTokens WRITE setContextTokens NOTIFY settingsChanged)
  Q_PROPERTY(bool requireKey READ requireKey WRITE setRequireKey NOTIFY settingsChanged)
  // Host header names answered besides the address and localhost, comma-separated (against DNS rebinding).
  Q_PROPERTY(QString allowedHosts READ allowedHosts WRITE setAllowedHosts NOTIFY settingsChanged)
  Q_PROPERTY(QString modelPath READ modelPath WRITE setModelPath NOTIFY settingsChanged)
  Q_PROPERTY(bool hostIsLoopback READ hostIsLoopback NOTIFY settingsChanged)
  // Why the settings cannot start a server as they are ("" when they can).
  Q_PROPERTY(QString settingsProblem READ settingsProblem NOTIFY settingsProblemChanged)
  // A note on what the settings expose ("every computer on your network can reach...") or "".
  Q_PROPERTY(QString exposureWarning READ exposureWarning NOTIFY settingsChanged)

  // The model the app has loaded (AppController keeps it current), served when modelPath is empty.
  Q_PROPERTY(QString appModelName READ appModelName NOTIFY appModelChanged)
  Q_PROPERTY(QString appModelPath READ appModelPath NOTIFY appModelChanged)

  // "stopped", "starting", "running" or "stopping".
  Q_PROPERTY(QString state READ state NOTIFY stateChanged)
  Q_PROPERTY(bool running READ running NOTIFY stateChanged)
  Q_PROPERTY(double loadProgress READ loadProgress NOTIFY loadProgressChanged)
  Q_PROPERTY(QString error READ error NOTIFY errorChanged)
  // While running: the base URL ("http://127.0.0.1:8080"), the model id clients send, and where it came from.
  Q_PROPERTY(QString url READ url NOTIFY stateChanged)
  Q_PROPERTY(QString servedModelName READ servedModelName NOTIFY stateChanged)
  Q_PROPERTY(QString servedModelPath READ servedModelPath NOTIFY stateChanged)
  Q_PROPERTY(QString servedBackend READ servedBackend NOTIFY stateChanged)
  Q_PROPERTY(int slotCapacity READ slotCapacity NOTIFY stateChanged)

  // Counters since the server started.
  Q_PROPERTY(int requestsServed READ requestsServed NOTIFY statsChanged)
  Q_PROPERTY(int requestsFailed READ requestsFailed NOTIFY statsChanged)
  Q_PROPERTY(int activeRequests READ activeRequests NOTIFY statsChanged)
  Q_PROPERTY(int queuedRequests READ queuedRequests NOTIFY statsChanged)
  Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY statsChanged)
  Q_PROPERTY(qint64 generatedTokens READ generatedTokens NOTIFY statsChanged)
  Q_PROPERTY(ServerRequestLog* requestLog READ requestLog CONSTANT)

  // [{id, name, prefix, created ("2026-12-07 21:04"), lastUsed ("" for never)}], newest first.
  Q_PROPERTY(QVariantList keys READ keys NOTIFY keysChanged)
  // Copyable examples filled in with the URL and the model's id.
  Q_PROPERTY(QString curlExample READ curlExample NOTIFY examplesChanged)
  Q_PROPERTY(QString pythonExample READ pythonExample NOTIFY examplesChanged)

 public:
  // `settings` must outlive this service; `keyStore` is adopted (made a child).
  // `requestStore` (taken over, like keyStore; nullptr: the request log lives in memory only) keeps the request
  // log across restarts.
  ServerService(AppSettings* settings, ApiKeyStore* keyStore, ServerRequestStore* requestStore = nullptr,
                QObject* parent = nullptr);
  ~ServerService() override;

  // Stops the server (in-flight requests cut off) and joins its thread. Safe to call twice.
  void shutdown();
  void setAppModel(const QString& path, const QString& name);

  Q_INVOKABLE void start();
  Q_INVOKABLE void stop();
  // A new key named `name`, returned in the clear this once; "" when it could not be saved (error says why).
  Q_INVOKABLE QString createKey(const QString& name);
  Q_INVOKABLE bool revokeKey(qint64 id);
  Q_INVOKABLE void clearError();
  Q_INVOKABLE void resetSettings();

  QString host() const { return m_host; }
  void setHost(const QString& host);
  int port() const { return m_port; }
  void setPort(int port);
  int parallel() const { return m_parallel; }
  void setParallel(int parallel);
  int queueSize() const { return m_queue; }
  void setQueueSize(int queue);
  int contextTokens() const { return m_context; }
  void setContextTokens(int tokens);
  bool requireKey() const { return m_requireKey; }
  void setRequireKey(bool require);
  QString allowedHosts() const { return m_allowedHosts; }
  void setAllowedHosts(const QString& hosts);
  QString modelPath() const { return m_modelPath; }
  void setModelPath(const QString& path);
  bool hostIsLoopback() const;
  QString settingsProblem() const;
  QString exposureWarning() const;

  QString appModelName() const { return m_appModelName; }
  QString appModelPath() const { return m_appModelPath; }
  QString state() const;
  bool running() const { return m_state == State::Running; }
  double loadProgress() const { return m_loadProgress; }
  QString error() const { return m_error; }
  QString url() const;
  QString servedModelName() const { return m_servedName; }
  QString servedModelPath() const { return m_servedPath; }
  QString servedBackend() const { return m_servedBackend; }
  int slotCapacity() const { return m_slotCapacity; }
  int requestsServed() const { return m_requestsServed; }
  int requestsFailed() const { return m_requestsFailed; }
  int activeRequests() const { return m_active; }
  int queuedRequests() const { return m_queued; }
  double tokensPerSecond() const { return m_tokensPerSecond; }
  qint64 generatedTokens() const { return m_generatedTokens; }
  ServerRequestLog* requestLog() const { return m_log; }
  QVariantList keys() const;
  QString curlExample() const;
  QString pythonExample() const;

  // The port actually listened on while running (tests start on port 0).
  int listeningPort() const { return m_listeningPort; }

 Q_SIGNALS:
  void settingsChanged();
  void settingsProblemChanged();
  void appModelChanged();
  void stateChanged();
  void loadProgressChanged();
  void errorChanged();
  void statsChanged();
  void keysChanged();
  void examplesChanged();
  // A start failed because the port is taken (besides error, for tests and a focused port field).
  void portInUse();

 private:
  enum class State { Stopped, Starting, Running, Stopping };
  void setState(State state);
  void setError(const QString& error);
  void saveSettings();
  void reloadKeys();
  void handleStarted(int port, int slotCapacity, const QString& backend);
  void handleFailed(const QString& message, bool addressInUse);
  void handleStopped();
  void handleCounters(int running, int queued, qint64 generatedTokens);
  void handleRequest(const QVariantMap& entry);
  void keyUsed(qint64 id);
  QString exampleModelId() const;
  QString exampleBaseUrl() const;

  AppSettings* m_settings;
  ApiKeyStore* m_keyStore;
  std::shared_ptr<ApiKeyVerifier> m_verifier = std::make_shared<ApiKeyVerifier>();
  QThread m_thread;
  ServerHost* m_serverHost;  // lives on m_thread; deleted there when the thread finishes
  ServerRequestLog* m_log;
  bool m_shutDown = false;

  QString m_host;
  int m_port = 8080;
  int m_parallel = 4;
  int m_queue = 64;
  int m_context = 0;
  bool m_requireKey = true;
  QString m_allowedHosts;
  QString m_modelPath;

  QString m_appModelName, m_appModelPath;
  State m_state = State::Stopped;
  double m_loadProgress = 0;
  QString m_error;
  QString m_servedName, m_servedPath, m_servedBackend, m_servedHost;
  bool m_servedWithKey = true;
  int m_listeningPort = 0;
  int m_slotCapacity = 0;
  int m_requestsServed = 0, m_requestsFailed = 0, m_active = 0, m_queued = 0;
  double m_tokensPerSecond = 0;
  qint64 m_generatedTokens = 0;
  QList<QPair<qint64, qint64>> m_rateSamples;  // (ms on m_clock, generated tokens), the last few seconds
  QElapsedTimer m_clock;
  QHash<qint64, qint64> m_keyMarkedMs;  // when each key's last use was written, to write at most once a minute
};
