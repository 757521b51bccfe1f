// ServerHost: load, listen, report and stop, on the server's thread.
#include "serverhost.h"

#include <QFile>
#include <QHostAddress>
#include <QTcpServer>
#include <QTimer>

#include "engine/backend.h"
#include "engine/error.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "services/server/apiserver.h"

namespace {

// Binding a throwaway listener first says "port in use" before a model load of many seconds, and tells that
// case apart from the others (QTcpServer's error code; ApiServer::listen gives only its text).
bool probeAddress(const QHostAddress& host, quint16 port, QString* error, bool* inUse) {
  if (port == 0) return true;
  QTcpServer probe;
  if (probe.listen(host, port)) return true;
  *inUse = probe.serverError() == QAbstractSocket::AddressInUseError;
  *error = *inUse ? ServerHost::tr("Port %1 on %2 is already in use by another program (another server, or a "
                                   "second LLM Workbench). Choose another port or stop that program.")
                        .arg(port)
                        .arg(host.toString())
                  : ServerHost::tr("Cannot listen on %1:%2: %3").arg(host.toString()).arg(port).arg(probe.errorString());
  return false;
}

}  // namespace

ServerHost::ServerHost(QObject* parent) : QObject(parent) {
  m_counters.setInterval(500);
  connect(&m_counters, &QTimer::timeout, this, &ServerHost::reportCounters);
}

ServerHost::~ServerHost() { release(); }

void ServerHost::start(const ServerLaunch& launch) {
  release();
  m_cancelLoad.store(false);
  QHostAddress host;
  if (!host.setAddress(launch.host)) {
    Q_EMIT failed(tr("'%1' is not an IP address (use 127.0.0.1 for this computer only, 0.0.0.0 for every network).")
                      .arg(launch.host),
                  false);
    return;
  }
  QString error;
  bool inUse = false;
  if (!probeAddress(host, quint16(launch.port), &error, &inUse)) {
    Q_EMIT failed(error, inUse);
    return;
  }
  ApiServer::Options options;
  options.host = host;
  options.port = quint16(launch.port);
  options.modelName = launch.modelName;
  options.keyChecker = launch.keyChecker;
  options.allowedHosts << launch.allowedHosts;
  options.batch.parallel = launch.parallel;
  options.batch.max_queue = launch.queue;
  options.batch.slot_capacity = launch.context;
  if (!launch.blockFile.isEmpty()) {
    QFile f(launch.blockFile);
    if (!f.open(QIODevice::ReadOnly)) {
      Q_EMIT failed(tr("Cannot read the blocked-phrases file %1: %2").arg(launch.blockFile, f.errorString()), false);
      return;
    }
    for (const QByteArray& line : f.readAll().split('\n'))
      if (const QString phrase = QString::fromUtf8(line).trimmed(); !phrase.isEmpty()) options.blockedPhrases << phrase;
  }
  try {
    engine::BackendChoice choice = engine::choose_backend(engine::BackendPreference::Auto, launch.threads);
    m_backend = std::move(choice.backend);
    m_model = engine::load_model(launch.modelPath.toStdString(), [this](float fraction, const std::string&) {
      Q_EMIT loadProgress(double(fraction));
      return !m_cancelLoad.load();
    });
    if (!m_model->tokenizer())
      throw engine::Error(tr("%1 has no tokenizer (tokenizer.json or vocab.json + merges.txt), so it cannot be served")
                              .arg(launch.modelPath)
                              .toStdString());
    m_server = std::make_unique<ApiServer>(*m_model, *m_backend, options);
    connect(m_server.get(), &ApiServer::requestFinished, this, &ServerHost::requestFinished);
    if (!m_server->listen(&error)) {
      release();
      Q_EMIT failed(error, error.contains(QLatin1String("in use"), Qt::CaseInsensitive));
      return;
    }
  } catch (const engine::Cancelled&) {
    release();
    Q_EMIT failed(tr("Start cancelled."), false);
    return;
  } catch (const std::exception& e) {
    release();
    Q_EMIT failed(tr("Cannot serve %1: %2").arg(launch.modelPath, QString::fromStdString(e.what())), false);
    return;
  }
  m_counters.start();
  Q_EMIT started(m_server->port(), m_server->slotCapacity(), QString::fromStdString(m_backend->name()));
}

void ServerHost::stop(bool graceful) {
  m_counters.stop();
  if (!m_server) {
    release();
    Q_EMIT stopped();
    return;
  }
  m_server->stopServing();
  if (!graceful) {
    release();
    Q_EMIT stopped();
    return;
  }
  // The cancelled requests' ends are queued on this thread already; they write each client's last bytes, and
  // the sockets need a moment of this event loop to send them before the server (and its sockets) goes.
  QTimer::singleShot(300, this, [this] {
    reportCounters();
    release();
    Q_EMIT stopped();
  });
}

void ServerHost::release() {
  m_counters.stop();
  m_server.reset();
  m_model.reset();
  m_backend.reset();
}

void ServerHost::reportCounters() {
  if (!m_server) return;
  const engine::SchedulerCounters c = m_server->counters();
  Q_EMIT countersChanged(c.running, c.queued, c.generated_tokens);
}
