// `serve`: the model behind a local OpenAI-compatible HTTP API and its WebSocket twin /v1/ws
// (app/services/server/apiserver.h), with continuous batching over --parallel slots. Prints one line when it
// listens ("serving NAME on http://HOST:PORT ...") and one JSON line per answered request on stderr; stops cleanly
// on SIGINT / SIGTERM.
#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTimer>

#include <csignal>
#include <cstdio>
#include <iostream>

#include "cli_args.h"
#include "cli_common.h"
#include "commands.h"
#include "engine/error.h"
#include "services/server/apiserver.h"

namespace wb::cli {

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

}  // namespace

int cmd_serve(int argc, char** argv) {
  const std::vector<FlagSpec> flags = {
      {"model", true, false, "model directory or file"},
      {"host", true, false, "address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)"},
      {"port", true, false, "TCP port (default 8080; 0: any free port, printed when listening)"},
      {"api-key", true, true, "a key clients must send as 'Authorization: Bearer KEY' (repeatable)"},
      {"api-key-file", true, false, "a file with one key per line (blank lines and # comments skipped)"},
      {"parallel", true, false, "requests generated at once, each in its own KV-cache slot (default 4)"},
      {"queue", true, false, "requests that may wait for a slot; beyond it the answer is 503 busy (default 64)"},
      {"ctx", true, false, "tokens per slot, prompt and reply together (default: the model's context)"},
      {"prefill-budget", true, false, "prompt tokens computed per step over all slots (default 256)"},
      {"allow-host", true, true, "a Host header name to answer besides the listening address and localhost "
                                 "(repeatable; against DNS rebinding every other name is refused)"},
      {"allow-origin", true, true, "a browser origin (e.g. https://app.example) whose pages may open the WebSocket "
                                   "/v1/ws besides this server's own (repeatable; '*' for any)"},
      {"block-file", true, false, "content filter: a file of phrases (one per line) a prompt may not contain and a "
                                  "reply stops before"},
      {"no-api-key", false, false, "serve without a key (otherwise a key is generated and printed when none is given)"},
      {"threads", true, false, "CPU threads (default: all cores)"},
      {"request-timeout", true, false, "ms a connection may take to send its whole request; then 408 (default 30000)"},
  };
  const Args a(flags, argc, argv, 2);
  const std::string model_path = a.required("model");
  QStringList keys;
  for (const std::string& k : a.all("api-key")) keys << QString::fromStdString(k);
  if (a.has("api-key-file")) {
    QFile f(QString::fromStdString(a.str("api-key-file")));
    if (!f.open(QIODevice::ReadOnly)) throw UsageError("cannot read --api-key-file " + a.str("api-key-file"));
    for (const QByteArray& line : f.readAll().split('\n')) {
      const QString k = QString::fromUtf8(line).trimmed();
      if (!k.isEmpty() && !k.startsWith(QLatin1Char('#'))) keys << k;
    }
    if (keys.isEmpty()) throw UsageError("--api-key-file " + a.str("api-key-file") + " holds no key");
  }
  if (a.has("no-api-key") && !keys.isEmpty()) throw UsageError("--no-api-key contradicts --api-key / --api-key-file");
  bool generated_key = false;
  if (keys.isEmpty() && !a.has("no-api-key")) {
    // Safe by default: a key nobody else knows, shown once.
    keys << QStringLiteral("sk-wb-") + QString::number(QRandomGenerator::system()->generate64(), 16) +
                QString::number(QRandomGenerator::system()->generate64(), 16);
    generated_key = true;
  }
  ApiServer::Options options;
  for (const std::string& h : a.all("allow-host")) options.allowedHosts << QString::fromStdString(h);
  for (const std::string& o : a.all("allow-origin")) options.allowedOrigins << QString::fromStdString(o);
  if (a.has("block-file")) {
    QFile f(QString::fromStdString(a.str("block-file")));
    if (!f.open(QIODevice::ReadOnly)) throw UsageError("cannot read --block-file " + a.str("block-file"));
    for (const QByteArray& line : f.readAll().split('\n')) {
      const QString phrase = QString::fromUtf8(line).trimmed();
      if (!phrase.isEmpty()) options.blockedPhrases << phrase;
    }
  }
  const std::string host = a.str("host", "127.0.0.1");
  if (!options.host.setAddress(QString::fromStdString(host))) throw UsageError("--host must be an IP address, got '" + host + "'");
  options.port = quint16(a.integer("port", 8080, 0, 65535));
  options.apiKeys = keys;
  options.batch.parallel = int(a.integer("parallel", 4, 1, 256));
  options.batch.max_queue = int(a.integer("queue", 64, 0, 1 << 20));
  options.batch.slot_capacity = int(a.integer("ctx", 0, 1, 1 << 24));
  options.batch.prefill_budget = int(a.integer("prefill-budget", 256, 1, 1 << 20));
  options.requestTimeoutMs = int(a.integer("request-timeout", 30000, 100, 24 * 3600 * 1000));
  const int threads = int(a.integer("threads", 0, 0, 1024));

  int qt_argc = 1;
  char* qt_argv[] = {argv[0], nullptr};
  QCoreApplication app(qt_argc, qt_argv);
  OpenedModel om = open_model(model_path, threads);
  require_tokenizer(*om.model, model_path);
  options.modelName = QFileInfo(QString::fromStdString(model_path)).fileName();
  ApiServer server(*om.model, *om.backend.backend, options);
  QString error;
  if (!server.listen(&error)) throw engine::Error(error.toStdString());
  QObject::connect(&server, &ApiServer::requestFinished, [](const QVariantMap& entry) {
    std::cerr << QJsonDocument(QJsonObject::fromVariantMap(entry)).toJson(QJsonDocument::Compact).toStdString() << "\n";
  });
  std::printf("serving %s on http://%s:%u (%d parallel slots of %d tokens, %s)\n",
              options.modelName.toUtf8().constData(), host.c_str(), unsigned(server.port()), options.batch.parallel,
              server.slotCapacity(), keys.isEmpty() ? "no API key" : "API key required");
  if (generated_key) std::printf("api key (shown once): %s\n", keys.first().toUtf8().constData());
  std::fflush(stdout);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  QTimer poll;
  QObject::connect(&poll, &QTimer::timeout, [&] {
    if (g_stop) app.quit();
  });
  poll.start(100);
  app.exec();
  return 0;
}

}  // namespace wb::cli
