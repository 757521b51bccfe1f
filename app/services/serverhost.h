// ServerHost: the local server's engine side, living on the server's own QThread (ServerService owns both).
//
// It loads the served model with a backend of its own, runs an ApiServer over them (whose scheduler generates
// on yet another thread, as `llm-workbench-cli serve` does) and reports back with queued signals: started or
// failed, the counters twice a second, one entry per answered request, stopped. Nothing here touches the GUI
// thread, so a slow load or a busy server never stalls the window, and a busy window never stalls clients.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVariantMap>

#include <atomic>
#include <functional>
#include <memory>

namespace engine {
class Backend;
class Model;
}  // namespace engine
class ApiServer;

// What one start asks for (ServerService fills it from its settings).
struct ServerLaunch {
  QString modelPath;
  QString modelName;  // the id /v1/models lists
  QString host;       // an IP address
  int port = 8080;    // 0: any free port
  int threads = 0;    // CPU threads; 0: all cores
  int parallel = 4;
  int queue = 64;
  int context = 0;  // tokens per slot; 0: the model's context
  QStringList allowedHosts;
  QString blockFile;  // content filter phrases, one per line; empty: none
  std::function<bool(const QString&)> keyChecker;  // empty: no key needed
};

class ServerHost : public QObject {
  Q_OBJECT

 public:
  explicit ServerHost(QObject* parent = nullptr);
  ~ServerHost() override;

  // Any thread: makes a running load give up at its next progress report (start then fails as cancelled).
  void cancelLoad() { m_cancelLoad.store(true); }

  // On the host's thread. Ends in started or failed.
  void start(const ServerLaunch& launch);
  // On the host's thread. `graceful`: in-flight requests are ended as cancelled and their clients get a
  // complete response before the sockets close (a short wait); otherwise (app quit) they are cut off at once.
  // Ends in stopped (also when nothing was running).
  void stop(bool graceful);

 Q_SIGNALS:
  void loadProgress(double fraction);
  void started(int port, int slotCapacity, const QString& backend);
  // portInUse: the address could not be bound because another program holds it.
  void failed(const QString& message, bool portInUse);
  void stopped();
  void countersChanged(int running, int queued, qint64 generatedTokens);
  void requestFinished(const QVariantMap& entry);

 private:
  void release();
  void reportCounters();

  std::unique_ptr<engine::Backend> m_backend;
  std::unique_ptr<engine::Model> m_model;
  std::unique_ptr<ApiServer> m_server;  // references m_model and m_backend: released first
  QTimer m_counters{this};  // a child, so moveToThread takes it along
  std::atomic<bool> m_cancelLoad{false};
};
