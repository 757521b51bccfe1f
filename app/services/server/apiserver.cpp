// ApiServer: connections, routing, keys, and the hand-over between the scheduler's thread and the sockets.
#include "apiserver.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSet>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QWebSocketServer>

#include "apiexchange.h"
#include "httprequestparser.h"

namespace {

QByteArray reasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 426: return "Upgrade Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Status";
  }
}

using apiserver::bytes;
using apiserver::json;

}  // namespace

ApiServer::ApiServer(const engine::Model& model, engine::Backend& backend, const Options& options, QObject* parent)
    : QObject(parent), m_model(model), m_options(options), m_scheduler(model, backend, options.batch) {
  m_loop = std::thread([this] { m_scheduler.run(); });
}

ApiServer::~ApiServer() { stopServing(); }

void ApiServer::stopServing() {
  if (m_server) m_server->close();
  m_scheduler.stop();
  if (m_loop.joinable()) m_loop.join();
}

bool ApiServer::listen(QString* error) {
  m_server = new QTcpServer(this);
  connect(m_server, &QTcpServer::newConnection, this, &ApiServer::onNewConnection);
  // Never listens itself: upgrade() hands it connections whose handshake passed this server's checks.
  m_webSocketServer = new QWebSocketServer(QStringLiteral("llm-workbench"), QWebSocketServer::NonSecureMode, this);
  connect(m_webSocketServer, &QWebSocketServer::newConnection, this, &ApiServer::onWebSocketConnection);
  if (m_server->listen(m_options.host, m_options.port)) return true;
  if (error)
    *error = QStringLiteral("cannot listen on %1:%2: %3")
                 .arg(m_options.host.toString())
                 .arg(m_options.port)
                 .arg(m_server->errorString());
  return false;
}

quint16 ApiServer::port() const { return m_server ? m_server->serverPort() : 0; }

void ApiServer::onNewConnection() {
  while (QTcpSocket* socket = m_server->nextPendingConnection()) {
    auto parser = std::make_shared<HttpRequestParser>();
    ++m_openConnections;
    // Counted down by a child rather than by the socket's own destroyed signal: a QWebSocket that took the socket
    // over disconnects every signal of it when it is deleted.
    auto* counted = new QObject(socket);
    connect(counted, &QObject::destroyed, this, [this] { --m_openConnections; });
    connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    // The head is read in a transaction, so that a WebSocket handshake can be put back unread for
    // QWebSocketServer (upgrade()); it is committed as soon as the request is known to be no handshake.
    socket->startTransaction();
    auto* deadline = new QTimer(socket);
    deadline->setSingleShot(true);
    connect(deadline, &QTimer::timeout, this, [this, socket, parser] {
      if (parser->state() != HttpRequestParser::State::Incomplete) return;
      const ApiError e(408, QStringLiteral("the request did not arrive whole within %1 ms").arg(m_options.requestTimeoutMs));
      respond(socket, e.status, json(apiErrorBody(e)), "application/json");
      QElapsedTimer none;
      log("?", "?", e.status, none);
    });
    deadline->start(m_options.requestTimeoutMs);
    connect(socket, &QTcpSocket::readyRead, this, [this, socket, parser, deadline] {
      if (parser->state() != HttpRequestParser::State::Incomplete || socket->state() != QAbstractSocket::ConnectedState) {
        if (socket->isTransactionStarted()) socket->commitTransaction();
        socket->readAll();  // one request per connection; after a 408, nothing more is read
        return;
      }
      const QByteArray received = socket->readAll();
      const HttpRequestParser::State state = parser->feed(std::string_view(received.constData(), size_t(received.size())));
      if (socket->isTransactionStarted() && (state == HttpRequestParser::State::Failed || parser->headComplete()) &&
          !(state == HttpRequestParser::State::Complete && parser->request().path == "/v1/ws"))
        socket->commitTransaction();  // a request with a body, or a failed one: no handshake to hand over
      switch (state) {
        case HttpRequestParser::State::Incomplete: return;
        case HttpRequestParser::State::Failed: {
          deadline->stop();
          const ApiError e(parser->errorStatus(), QString::fromStdString(parser->errorMessage()));
          respond(socket, e.status, json(apiErrorBody(e)), "application/json");
          QElapsedTimer none;
          log("?", "?", e.status, none);
          return;
        }
        case HttpRequestParser::State::Complete:
          deadline->stop();
          handle(socket, parser->request());
          return;
      }
    });
  }
}

void ApiServer::respond(QTcpSocket* socket, int status, const QByteArray& body, const QByteArray& contentType,
                        const QList<QPair<QByteArray, QByteArray>>& extraHeaders) {
  if (!socket || socket->state() != QAbstractSocket::ConnectedState) return;
  QByteArray head = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
  head += "Content-Type: " + contentType + "\r\nContent-Length: " + QByteArray::number(body.size()) +
          "\r\nConnection: close\r\n";
  for (const auto& [k, v] : extraHeaders) head += k + ": " + v + "\r\n";
  socket->write(head + "\r\n" + body);
  socket->disconnectFromHost();
}

void ApiServer::log(const QByteArray& method, const QByteArray& path, int status, const QElapsedTimer& clock,
                    const QVariantMap& extra) {
  QVariantMap entry = extra;
  entry.insert(QStringLiteral("method"), QString::fromLatin1(method));
  entry.insert(QStringLiteral("path"), QString::fromLatin1(path));
  entry.insert(QStringLiteral("status"), status);
  entry.insert(QStringLiteral("ms"), clock.isValid() ? double(clock.nsecsElapsed()) / 1e6 : 0.0);
  Q_EMIT requestFinished(entry);
}

bool ApiServer::hostAllowed(const QByteArray& hostHeader) const {
  QString host = QString::fromLatin1(hostHeader).trimmed().toLower();
  const QString port = QStringLiteral(":%1").arg(this->port());
  if (host.endsWith(port)) host.chop(port.size());
  if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']'))) host = host.mid(1, host.size() - 2);
  if (host.isEmpty()) return false;
  const QHostAddress asAddress(host);
  if (!asAddress.isNull() && (asAddress == m_options.host || (m_options.host == QHostAddress::Any && asAddress.isLoopback()) ||
                              (m_options.host.isLoopback() && asAddress.isLoopback())))
    return true;
  for (const QString& allowed : m_options.allowedHosts)
    if (host == allowed.toLower()) return true;
  return false;
}

bool ApiServer::stoppedByFilter(const engine::GenerationResult& r) const {
  if (r.finish != engine::FinishReason::Stop || m_options.blockedPhrases.isEmpty()) return false;
  std::string raw;
  for (const engine::GeneratedToken& t : r.tokens) raw += t.bytes;
  const std::string rest = raw.substr(std::min(raw.size(), r.text.size()));
  for (const QString& phrase : m_options.blockedPhrases)
    if (rest.rfind(phrase.toStdString(), 0) == 0) return true;
  return false;
}

void ApiServer::handle(QTcpSocket* socket, const HttpRequest& request) {
  QElapsedTimer clock;
  clock.start();
  const auto fail = [&](const ApiError& e, const QList<QPair<QByteArray, QByteArray>>& headers = {}) {
    respond(socket, e.status, json(apiErrorBody(e)), "application/json", headers);
    log(bytes(request.method), bytes(request.path), e.status, clock);
  };
  if (!hostAllowed(bytes(request.header("host"))))
    return fail(ApiError(403, QStringLiteral("the Host header '%1' is not one this server answers to (start it with "
                                             "--allow-host NAME to add one)")
                                  .arg(QString::fromLatin1(bytes(request.header("host")).left(200))),
                         {}, QStringLiteral("permission_error")));
  if (request.path == "/health") {
    if (request.method != "GET") return fail(ApiError(405, QStringLiteral("use GET for /health")));
    const engine::SchedulerCounters c = m_scheduler.counters();
    respond(socket, 200,
            json({{QStringLiteral("status"), QStringLiteral("ok")},
                  {QStringLiteral("connections"), m_openConnections - 1},  // not counting the asking one
                  {QStringLiteral("running"), c.running},
                  {QStringLiteral("queued"), c.queued}}),
            "application/json");
    return log(bytes(request.method), bytes(request.path), 200, clock);
  }
  if (request.path == "/v1/ws") return upgrade(socket, request, clock);
  const bool known = request.path == "/v1/models" || request.path == "/v1/completions" ||
                     request.path == "/v1/chat/completions";
  if (!known) return fail(ApiError(404, QStringLiteral("no route %1").arg(QString::fromLatin1(bytes(request.path)))));
  if (!keyAccepted(apiserver::bearerKey(request)))
    return fail(ApiError(401, QStringLiteral("a valid API key is required (Authorization: Bearer KEY)"), {},
                         QStringLiteral("authentication_error")));
  if (request.path == "/v1/models") {
    if (request.method != "GET") return fail(ApiError(405, QStringLiteral("use GET for /v1/models")));
    const QJsonObject model{{QStringLiteral("id"), m_options.modelName},
                            {QStringLiteral("object"), QStringLiteral("model")},
                            {QStringLiteral("created"), qint64(0)},
                            {QStringLiteral("owned_by"), QStringLiteral("llm-workbench")}};
    respond(socket, 200,
            json({{QStringLiteral("object"), QStringLiteral("list")}, {QStringLiteral("data"), QJsonArray{model}}}),
            "application/json");
    return log(bytes(request.method), bytes(request.path), 200, clock);
  }
  if (request.method != "POST")
    return fail(ApiError(405, QStringLiteral("use POST for %1").arg(QString::fromLatin1(bytes(request.path)))));
  generate(socket, request, request.path == "/v1/chat/completions");
}

bool ApiServer::keyAccepted(const QString& presented) const {
  if (m_options.apiKeys.isEmpty() && !m_options.keyChecker) return true;
  return !presented.isEmpty() &&
         (m_options.apiKeys.contains(presented) || (m_options.keyChecker && m_options.keyChecker(presented)));
}

QString apiserver::bearerKey(const HttpRequest& request) {
  const QByteArray auth = bytes(request.header("authorization"));
  return auth.startsWith("Bearer ") ? QString::fromUtf8(auth.mid(7)).trimmed() : QString();
}

void ApiServer::generate(QTcpSocket* socket, const HttpRequest& http, bool chat) {
  auto ex = std::make_shared<Exchange>();
  ex->clock.start();
  ex->socket = socket;
  ex->method = bytes(http.method);
  ex->path = bytes(http.path);
  ex->id = (chat ? QStringLiteral("chatcmpl-") : QStringLiteral("cmpl-")) + QString::number(m_nextId++);
  const Refusal refused = submit(ex, bytes(http.body), chat);
  if (refused.error) {
    const ApiError& e = *refused.error;
    respond(socket, e.status, json(apiErrorBody(e)), "application/json",
            e.status == 503 ? QList<QPair<QByteArray, QByteArray>>{{"Retry-After", "1"}}
                            : QList<QPair<QByteArray, QByteArray>>{});
    return log(ex->method, ex->path, e.status, ex->clock, refused.logExtra);
  }
  connect(socket, &QTcpSocket::disconnected, this, [this, ex] { cancelExchange(ex, /*clientGone=*/true); });
  // Tokens reach the socket through queued calls, so none is written before these headers.
  if (ex->request.stream && socket->state() == QAbstractSocket::ConnectedState)
    socket->write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                  "Connection: close\r\n\r\n");
}

void ApiServer::cancelExchange(const std::shared_ptr<Exchange>& ex, bool clientGone) {
  if (clientGone) ex->gone = true;
  for (const uint64_t id : ex->schedulerIds) m_scheduler.cancel(id);
}

void ApiServer::finishExchange(const std::shared_ptr<Exchange>& ex) {
  if (ex->answered) return;
  ex->answered = true;
  QVariantMap extra{{QStringLiteral("promptTokens"), qint64(ex->request.prompt.size())},
                    {QStringLiteral("ttftMs"), ex->firstTokenMs}};
  qint64 completion = 0;
  for (const auto& r : ex->results) completion += r.stats.generated_tokens;
  extra.insert(QStringLiteral("completionTokens"), completion);
  if (ex->viaWebSocket) {
    // The WebSocket's "data: [DONE]".
    if (ex->listening())
      ex->webSocket->sendTextMessage(
          QString::fromUtf8(json({{QStringLiteral("id"), ex->id}, {QStringLiteral("done"), true}})));
    if (const std::shared_ptr<WebSocketClient> client = ex->client.lock()) client->inFlight.remove(ex->id);
  } else if (ex->request.stream) {
    if (ex->listening()) {
      ex->socket->write(streamDone());
      ex->socket->disconnectFromHost();
    }
  } else {
    respond(ex->socket, 200,
            json(generationResponse(ex->request, ex->id, m_options.modelName, ex->created, ex->results,
                                    m_model.tokenizer(), ex->filtered)),
            "application/json");
  }
  log(ex->method, ex->path, ex->gone ? 499 : 200, ex->clock, extra);  // 499: the client closed first
}

ApiServer::Refusal ApiServer::submit(const std::shared_ptr<Exchange>& ex, const QByteArray& body, bool chat) {
  try {
    ex->request = parseGenerationRequest(body, chat, m_model, m_scheduler.slot_capacity(),
                                         QRandomGenerator::global()->generate64());
  } catch (const ApiError& e) {
    return {e, {}};
  }
  // Content filter, input side: the rendered prompt as the model would read it.
  if (!m_options.blockedPhrases.isEmpty()) {
    const QString promptText = QString::fromStdString(m_model.tokenizer()->decode(ex->request.prompt));
    for (const QString& phrase : m_options.blockedPhrases)
      if (promptText.contains(phrase))
        return {ApiError(400, QStringLiteral("the request was refused by the server's content filter"), {},
                         QStringLiteral("content_filter")),
                {{QStringLiteral("filtered"), phrase}}};
    // Output side: as stop strings, so a blocked phrase is held back and never sent.
    for (const QString& phrase : m_options.blockedPhrases) ex->request.params.stop.push_back(phrase.toStdString());
  }
  ex->created = QDateTime::currentSecsSinceEpoch();
  const int n = ex->request.n;
  ex->results.resize(size_t(n));
  ex->started.assign(size_t(n), false);
  ex->remaining = n;

  for (int i = 0; i < n; ++i) {
    engine::GenerateParams params = ex->request.params;
    params.sampler.seed += uint64_t(i);
    engine::TokenCallback onToken;
    if (ex->request.stream)
      onToken = [this, ex, i](const engine::GeneratedToken&, const std::string& text) {
        QMetaObject::invokeMethod(
            this,
            [this, ex, i, text = QString::fromUtf8(text.data(), qsizetype(text.size()))] {
              if (ex->firstTokenMs < 0) ex->firstTokenMs = double(ex->clock.nsecsElapsed()) / 1e6;
              if (!ex->listening()) return;
              if (text.isEmpty() && ex->started[size_t(i)]) return;
              ex->sendChunk(streamChunk(ex->request, ex->id, m_options.modelName, ex->created, i, text, {},
                                        !ex->started[size_t(i)]));
              ex->started[size_t(i)] = true;
            },
            Qt::QueuedConnection);
        return !ex->gone;
      };
    const uint64_t sid = m_scheduler.submit(
        ex->request.prompt, params, std::move(onToken), [this, ex, i](const engine::GenerationResult& r) {
          QMetaObject::invokeMethod(
              this,
              [this, ex, i, r] {
                ex->results[size_t(i)] = r;
                if (stoppedByFilter(r)) ex->filtered.insert(i);
                if (ex->firstTokenMs < 0 && !r.tokens.empty()) ex->firstTokenMs = r.stats.time_to_first_token_ms;
                if (ex->request.stream)
                  ex->sendChunk(streamChunk(ex->request, ex->id, m_options.modelName, ex->created, i, {},
                                            ex->filtered.contains(i) ? QStringLiteral("content_filter")
                                                                     : apiFinishReason(r.finish),
                                            !ex->started[size_t(i)]));
                if (--ex->remaining == 0) finishExchange(ex);
              },
              Qt::QueuedConnection);
        });
    if (sid == 0) {
      // Busy: the choices already queued are cancelled (their ends answer no one); the client is told to come back.
      cancelExchange(ex, /*clientGone=*/true);
      ex->answered = true;
      return {ApiError(503, QStringLiteral("the server is busy (every slot and the queue are full); retry shortly"), {},
                       QStringLiteral("server_busy")),
              {}};
    }
    ex->schedulerIds.push_back(sid);
  }
  return {};
}
