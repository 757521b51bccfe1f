// ServerService: settings, keys and state of the local server; the server itself runs in ServerHost.
#include "serverservice.h"

#include <QDateTime>
#include <QFileInfo>
#include <QHostAddress>

#include "appsettings.h"
#include "serverhost.h"
#include "store/apikeystore.h"
#include "store/serverrequeststore.h"

namespace {

// Defaults, also what a setting equal to them is stored as (nothing): the CLI's `serve` defaults.
const QString kDefaultHost = QStringLiteral("127.0.0.1");
constexpr int kDefaultPort = 8080;
constexpr int kDefaultParallel = 4;
constexpr int kDefaultQueue = 64;
constexpr bool kDefaultRequireKey = true;
constexpr qint64 kRateWindowMs = 3000;  // tokens/s over about the last three seconds
constexpr qint64 kKeyUseWriteMs = 60000;

QString dateTime(qint64 ms) {
  return ms > 0 ? QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd HH:mm")) : QString();
}

QStringList hostList(const QString& text) {
  QStringList hosts;
  for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
    if (const QString h = part.trimmed(); !h.isEmpty()) hosts << h;
  return hosts;
}

}  // namespace

ServerService::ServerService(AppSettings* settings, ApiKeyStore* keyStore, ServerRequestStore* requestStore,
                             QObject* parent)
    : QObject(parent),
      m_settings(settings),
      m_keyStore(keyStore),
      m_serverHost(new ServerHost),
      m_log(new ServerRequestLog(200, this)),
      m_host(kDefaultHost) {
  m_keyStore->setParent(this);
  if (requestStore) {
    requestStore->setParent(this);
    m_log->setStore(requestStore);
  }
  m_clock.start();
  const QVariantMap s = m_settings->serverSettings();
  m_host = s.value(QStringLiteral("host"), kDefaultHost).toString();
  m_port = qBound(0, s.value(QStringLiteral("port"), kDefaultPort).toInt(), 65535);
  m_parallel = qBound(1, s.value(QStringLiteral("parallel"), kDefaultParallel).toInt(), 64);
  m_queue = qBound(0, s.value(QStringLiteral("queue"), kDefaultQueue).toInt(), 4096);
  m_context = qMax(0, s.value(QStringLiteral("context"), 0).toInt());
  m_requireKey = s.value(QStringLiteral("requireKey"), kDefaultRequireKey).toBool();
  m_allowedHosts = s.value(QStringLiteral("allowedHosts")).toString();
  m_modelPath = s.value(QStringLiteral("modelPath")).toString();

  m_serverHost->moveToThread(&m_thread);
  m_thread.setObjectName(QStringLiteral("api-server"));
  connect(&m_thread, &QThread::finished, m_serverHost, &QObject::deleteLater);
  connect(m_serverHost, &ServerHost::loadProgress, this, [this](double f) {
    m_loadProgress = f;
    Q_EMIT loadProgressChanged();
  }, Qt::QueuedConnection);
  connect(m_serverHost, &ServerHost::started, this, &ServerService::handleStarted, Qt::QueuedConnection);
  connect(m_serverHost, &ServerHost::failed, this, &ServerService::handleFailed, Qt::QueuedConnection);
  connect(m_serverHost, &ServerHost::stopped, this, &ServerService::handleStopped, Qt::QueuedConnection);
  connect(m_serverHost, &ServerHost::countersChanged, this, &ServerService::handleCounters, Qt::QueuedConnection);
  connect(m_serverHost, &ServerHost::requestFinished, this, &ServerService::handleRequest, Qt::QueuedConnection);
  connect(this, &ServerService::settingsChanged, this, &ServerService::examplesChanged);
  connect(this, &ServerService::stateChanged, this, &ServerService::examplesChanged);
  connect(this, &ServerService::appModelChanged, this, &ServerService::examplesChanged);
  connect(this, &ServerService::settingsChanged, this, &ServerService::settingsProblemChanged);
  connect(this, &ServerService::appModelChanged, this, &ServerService::settingsProblemChanged);
  connect(this, &ServerService::keysChanged, this, &ServerService::settingsProblemChanged);
  m_thread.start();
  reloadKeys();
}

ServerService::~ServerService() { shutdown(); }

void ServerService::shutdown() {
  if (m_shutDown) return;
  m_shutDown = true;
  m_serverHost->cancelLoad();  // a start that is loading gives up, so the stop below runs soon
  ServerHost* host = m_serverHost;
  QMetaObject::invokeMethod(host, [host] { host->stop(/*graceful=*/false); }, Qt::BlockingQueuedConnection);
  m_thread.quit();
  m_thread.wait();
  m_state = State::Stopped;
  m_log->flush();  // the requests of the last second, while the database is surely still open
}

void ServerService::setAppModel(const QString& path, const QString& name) {
  if (path == m_appModelPath && name == m_appModelName) return;
  m_appModelPath = path;
  m_appModelName = name;
  Q_EMIT appModelChanged();
}

// --- settings ---

void ServerService::saveSettings() {
  QVariantMap s;
  if (m_host != kDefaultHost) s.insert(QStringLiteral("host"), m_host);
  if (m_port != kDefaultPort) s.insert(QStringLiteral("port"), m_port);
  if (m_parallel != kDefaultParallel) s.insert(QStringLiteral("parallel"), m_parallel);
  if (m_queue != kDefaultQueue) s.insert(QStringLiteral("queue"), m_queue);
  if (m_context != 0) s.insert(QStringLiteral("context"), m_context);
  if (m_requireKey != kDefaultRequireKey) s.insert(QStringLiteral("requireKey"), m_requireKey);
  if (!m_allowedHosts.isEmpty()) s.insert(QStringLiteral("allowedHosts"), m_allowedHosts);
  if (!m_modelPath.isEmpty()) s.insert(QStringLiteral("modelPath"), m_modelPath);
  m_settings->setServerSettings(s);
  Q_EMIT settingsChanged();
}

void ServerService::setHost(const QString& host) {
  const QString h = host.trimmed() == QLatin1String("localhost") ? kDefaultHost : host.trimmed();
  if (h == m_host) return;
  m_host = h;
  saveSettings();
}

void ServerService::setPort(int port) {
  port = qBound(0, port, 65535);
  if (port == m_port) return;
  m_port = port;
  saveSettings();
}

void ServerService::setParallel(int parallel) {
  parallel = qBound(1, parallel, 64);
  if (parallel == m_parallel) return;
  m_parallel = parallel;
  saveSettings();
}

void ServerService::setQueueSize(int queue) {
  queue = qBound(0, queue, 4096);
  if (queue == m_queue) return;
  m_queue = queue;
  saveSettings();
}

void ServerService::setContextTokens(int tokens) {
  tokens = qMax(0, tokens);
  if (tokens == m_context) return;
  m_context = tokens;
  saveSettings();
}

void ServerService::setRequireKey(bool require) {
  if (require == m_requireKey) return;
  m_requireKey = require;
  saveSettings();
}

void ServerService::setAllowedHosts(const QString& hosts) {
  const QString joined = hostList(hosts).join(QStringLiteral(", "));
  if (joined == m_allowedHosts) return;
  m_allowedHosts = joined;
  saveSettings();
}

void ServerService::setModelPath(const QString& path) {
  if (path == m_modelPath) return;
  m_modelPath = path;
  saveSettings();
}

void ServerService::resetSettings() {
  m_host = kDefaultHost;
  m_port = kDefaultPort;
  m_parallel = kDefaultParallel;
  m_queue = kDefaultQueue;
  m_context = 0;
  m_requireKey = kDefaultRequireKey;
  m_allowedHosts.clear();
  m_modelPath.clear();
  saveSettings();
}

bool ServerService::hostIsLoopback() const {
  const QHostAddress address(m_host);
  return !address.isNull() && address.isLoopback();
}

QString ServerService::settingsProblem() const {
  if (QHostAddress(m_host).isNull())
    return tr("'%1' is not an IP address. Use 127.0.0.1 for this computer only, or 0.0.0.0 for every network.")
        .arg(m_host);
  if (!m_requireKey && !hostIsLoopback())
    return tr("Serving without an API key is allowed only on this computer (127.0.0.1). Require a key, or "
              "listen on 127.0.0.1.");
  if (m_modelPath.isEmpty() && m_appModelPath.isEmpty())
    return tr("No model to serve: load one in the app, or choose one here.");
  return {};
}

QString ServerService::exposureWarning() const {
  const QHostAddress address(m_host);
  if (address.isNull() || address.isLoopback()) return {};
  if (address == QHostAddress::AnyIPv4 || address == QHostAddress::AnyIPv6 || address == QHostAddress::Any)
    return tr("Listening on %1 makes the server reachable from every network this computer is on, not only "
              "from this computer. Anyone who has a key can use the model.")
        .arg(m_host);
  return tr("Listening on %1 makes the server reachable from that network, not only from this computer.").arg(m_host);
}

// --- keys ---

void ServerService::reloadKeys() {
  m_verifier->setKeys(m_keyStore->hashes());
  Q_EMIT keysChanged();
}

QVariantList ServerService::keys() const {
  QVariantList list;
  for (const StoredApiKey& k : m_keyStore->keys())
    list << QVariantMap{{QStringLiteral("id"), k.id},
                        {QStringLiteral("name"), k.name},
                        {QStringLiteral("prefix"), k.prefix},
                        {QStringLiteral("created"), dateTime(k.createdMs)},
                        {QStringLiteral("lastUsed"), dateTime(k.lastUsedMs)}};
  return list;
}

QString ServerService::createKey(const QString& name) {
  const QString key = m_keyStore->createKey(name);
  if (key.isEmpty()) setError(tr("Could not save the API key. %1").arg(tr("The database refused the write.")));
  reloadKeys();
  return key;
}

bool ServerService::revokeKey(qint64 id) {
  const bool ok = m_keyStore->revokeKey(id);
  if (!ok) setError(tr("Could not revoke the API key."));
  reloadKeys();  // the server's next request already checks the new list
  return ok;
}

void ServerService::keyUsed(qint64 id) {
  const qint64 now = QDateTime::currentMSecsSinceEpoch();
  if (now - m_keyMarkedMs.value(id, 0) < kKeyUseWriteMs) return;
  m_keyMarkedMs.insert(id, now);
  if (m_keyStore->markUsed(id, now)) Q_EMIT keysChanged();
}

// --- start / stop ---

void ServerService::start() {
  if (m_shutDown || m_state != State::Stopped) return;
  if (const QString problem = settingsProblem(); !problem.isEmpty()) return setError(problem);
  setError({});
  ServerLaunch launch;
  launch.modelPath = m_modelPath.isEmpty() ? m_appModelPath : m_modelPath;
  launch.modelName = m_modelPath.isEmpty() && !m_appModelName.isEmpty() ? m_appModelName
                                                                         : QFileInfo(launch.modelPath).fileName();
  launch.host = m_host;
  launch.port = m_port;
  launch.threads = m_settings->threads();
  launch.parallel = m_parallel;
  launch.queue = m_queue;
  launch.context = m_context;
  launch.allowedHosts = hostList(m_allowedHosts);
  if (m_requireKey) {
    // Runs on the server's thread: the verifier is thread-safe; the use is recorded back on this thread.
    launch.keyChecker = [verifier = m_verifier, this](const QString& key) {
      const qint64 id = verifier->match(key);
      if (id != 0) QMetaObject::invokeMethod(this, [this, id] { keyUsed(id); }, Qt::QueuedConnection);
      return id != 0;
    };
  }
  m_servedName = launch.modelName;
  m_servedPath = launch.modelPath;
  m_servedHost = m_host;
  m_servedWithKey = m_requireKey;
  m_loadProgress = 0;
  Q_EMIT loadProgressChanged();
  setState(State::Starting);
  ServerHost* host = m_serverHost;
  QMetaObject::invokeMethod(host, [host, launch] { host->start(launch); }, Qt::QueuedConnection);
}

void ServerService::stop() {
  if (m_shutDown || m_state == State::Stopped || m_state == State::Stopping) return;
  m_serverHost->cancelLoad();
  setState(State::Stopping);
  ServerHost* host = m_serverHost;
  QMetaObject::invokeMethod(host, [host] { host->stop(/*graceful=*/true); }, Qt::QueuedConnection);
}

void ServerService::handleStarted(int port, int slotCapacity, const QString& backend) {
  if (m_state != State::Starting) return;  // stopped while starting: the stop that follows ends it
  m_listeningPort = port;
  m_slotCapacity = slotCapacity;
  m_servedBackend = backend;
  m_requestsServed = m_requestsFailed = m_active = m_queued = 0;
  m_generatedTokens = 0;
  m_tokensPerSecond = 0;
  m_rateSamples.clear();
  Q_EMIT statsChanged();  // the request log stays: it is the server's history, across starts and restarts
  setState(State::Running);
}

void ServerService::handleFailed(const QString& message, bool addressInUse) {
  if (m_state == State::Stopping) return;  // stopped while starting: the stop that follows ends in handleStopped
  setState(State::Stopped);
  setError(message);
  if (addressInUse) Q_EMIT portInUse();
}

void ServerService::handleStopped() {
  if (m_state == State::Starting) return;  // a failed start already ended in handleFailed
  m_listeningPort = 0;
  m_active = m_queued = 0;
  m_tokensPerSecond = 0;
  Q_EMIT statsChanged();
  setState(State::Stopped);
}

void ServerService::handleCounters(int running, int queued, qint64 generatedTokens) {
  if (m_state != State::Running && m_state != State::Stopping) return;
  const qint64 now = m_clock.elapsed();
  m_rateSamples.append({now, generatedTokens});
  while (m_rateSamples.size() > 2 && now - m_rateSamples.first().first > kRateWindowMs) m_rateSamples.removeFirst();
  const auto& [firstMs, firstTokens] = m_rateSamples.first();
  m_tokensPerSecond = now > firstMs ? double(generatedTokens - firstTokens) * 1000.0 / double(now - firstMs) : 0.0;
  m_active = running;
  m_queued = queued;
  m_generatedTokens = generatedTokens;
  Q_EMIT statsChanged();
}

void ServerService::handleRequest(const QVariantMap& entry) {
  ++m_requestsServed;
  if (entry.value(QStringLiteral("status")).toInt() >= 400) ++m_requestsFailed;
  m_log->append(entry, QDateTime::currentMSecsSinceEpoch());
  Q_EMIT statsChanged();
}

void ServerService::setState(State state) {
  if (state == m_state) return;
  m_state = state;
  Q_EMIT stateChanged();
}

void ServerService::setError(const QString& error) {
  if (error == m_error) return;
  m_error = error;
  Q_EMIT errorChanged();
}

void ServerService::clearError() { setError({}); }

QString ServerService::state() const {
  switch (m_state) {
    case State::Stopped: return QStringLiteral("stopped");
    case State::Starting: return QStringLiteral("starting");
    case State::Running: return QStringLiteral("running");
    case State::Stopping: return QStringLiteral("stopping");
  }
  return {};
}

// --- URL and examples ---

QString ServerService::url() const {
  if (m_state != State::Running) return {};
  const QHostAddress address(m_servedHost);
  const QString host = address.protocol() == QAbstractSocket::IPv6Protocol ? QLatin1Char('[') + m_servedHost + QLatin1Char(']')
                                                                          : m_servedHost;
  return QStringLiteral("http://%1:%2").arg(host).arg(m_listeningPort);
}

// The address a client on this computer uses: a server on every interface is reached through loopback.
QString ServerService::exampleBaseUrl() const {
  const bool live = m_state == State::Running;
  const QString hostText = live ? m_servedHost : m_host;
  const int port = live ? m_listeningPort : m_port;
  const QHostAddress address(hostText);
  QString host = hostText;
  if (address == QHostAddress::AnyIPv4 || address == QHostAddress::Any) host = QStringLiteral("127.0.0.1");
  else if (address == QHostAddress::AnyIPv6 || address == QHostAddress::LocalHostIPv6) host = QStringLiteral("[::1]");
  else if (address.protocol() == QAbstractSocket::IPv6Protocol) host = QLatin1Char('[') + hostText + QLatin1Char(']');
  return QStringLiteral("http://%1:%2").arg(host).arg(port);
}

QString ServerService::exampleModelId() const {
  if (m_state != State::Stopped && !m_servedName.isEmpty()) return m_servedName;
  if (!m_modelPath.isEmpty()) return QFileInfo(m_modelPath).fileName();
  return m_appModelName.isEmpty() ? QStringLiteral("MODEL") : m_appModelName;
}

QString ServerService::curlExample() const {
  const bool key = m_state != State::Stopped ? m_servedWithKey : m_requireKey;
  QString s = QStringLiteral("curl %1/v1/chat/completions \\\n  -H \"Content-Type: application/json\" \\\n")
                  .arg(exampleBaseUrl());
  if (key) s += QStringLiteral("  -H \"Authorization: Bearer $WB_API_KEY\" \\\n");
  s += QStringLiteral("  -d '{\"model\": \"%1\", \"messages\": [{\"role\": \"user\", \"content\": \"Hello!\"}]}'")
           .arg(exampleModelId());
  return s;
}

QString ServerService::pythonExample() const {
  const bool key = m_state != State::Stopped ? m_servedWithKey : m_requireKey;
  return QStringLiteral(
             "import os\n"
             "from openai import OpenAI\n\n"
             "client = OpenAI(base_url=\"%1/v1\", api_key=%2)\n"
             "reply = client.chat.completions.create(\n"
             "    model=\"%3\",\n"
             "    messages=[{\"role\": \"user\", \"content\": \"Hello!\"}],\n"
             ")\n"
             "print(reply.choices[0].message.content)")
      .arg(exampleBaseUrl(),
           key ? QStringLiteral("os.environ[\"WB_API_KEY\"]") : QStringLiteral("\"none\"  # no key needed"),
           exampleModelId());
}
