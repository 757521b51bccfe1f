// ApiServer's WebSocket endpoint, /v1/ws: the upgrade's checks, the hand-over, and the message protocol.
//
// Why a hand-over to QWebSocketServer and not our own RFC 6455: our HTTP parser has already read the handshake
// request by the time it is known to be one, but it reads the head inside a QIODevice transaction
// (onNewConnection), so rolling the transaction back puts those bytes back in the socket's buffer unread.
// QWebSocketServer::handleConnection() then reads the handshake as if it were the first to see the connection and
// does everything RFC 6455 asks (Sec-WebSocket-Accept, versions, framing, masking, fragmentation, ping, close), and
// its message and frame limits bound what a client can make us buffer. What it cannot do (a Host allowlist, our API
// keys, an Origin policy, our routes) happens before the hand-over, in upgrade(), with the same code as HTTP.
//
// Protocol (README "WebSocket"): each client text message is one request,
//   {"endpoint": "/v1/chat/completions" | "/v1/completions", "id": "optional string", "body": {...}}
// whose body is what the HTTP route takes ("stream" is forced on). The server answers with the very chunk objects
// the SSE stream carries, one per text message, then {"id": ..., "done": true} in place of "data: [DONE]". Every
// message about a request has its "id": the client's id, or the server's "chatcmpl-N" / "cmpl-N" when it gave
// none. Refusals are OpenAI's error object plus "id" (the client's, or null). Several requests may be in flight on
// one socket (at most webSocketMaxInFlight; give each its own id); {"cancel": "id"} ends one early (it then ends as
// a cancelled request does: its finish chunk and "done"); closing the socket cancels them all.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <QUrl>
#include <QUrlQuery>
#include <QWebSocket>
#include <QWebSocketServer>

#include "apiexchange.h"
#include "apiserver.h"
#include "httprequestparser.h"

namespace {

using apiserver::bytes;
using apiserver::json;

constexpr qsizetype kMaxClientIdChars = 128;

}  // namespace

bool ApiServer::originAllowed(const QByteArray& origin) const {
  if (origin.isEmpty()) return true;  // not a browser: the key is the protection
  const QString text = QString::fromLatin1(origin).trimmed();
  for (const QString& allowed : m_options.allowedOrigins)
    if (allowed == QLatin1String("*") || text.compare(allowed, Qt::CaseInsensitive) == 0) return true;
  // This server's own origin: a page it served (it serves none today) or one a user opened at its address.
  const QUrl url(text, QUrl::StrictMode);
  const QString scheme = url.scheme().toLower();
  if (!url.isValid() || url.host().isEmpty() || (scheme != QLatin1String("http") && scheme != QLatin1String("https")))
    return false;  // "null" (a sandboxed frame, a file:// page) included
  if (url.port(scheme == QLatin1String("https") ? 443 : 80) != int(port())) return false;
  const QString host = url.host().contains(QLatin1Char(':')) ? QStringLiteral("[%1]").arg(url.host()) : url.host();
  return hostAllowed(host.toLatin1());
}

void ApiServer::upgrade(QTcpSocket* socket, const HttpRequest& request, const QElapsedTimer& clock) {
  const auto fail = [&](const ApiError& e, const QList<QPair<QByteArray, QByteArray>>& headers = {}) {
    if (socket->isTransactionStarted()) socket->commitTransaction();
    respond(socket, e.status, json(apiErrorBody(e)), "application/json", headers);
    log(bytes(request.method), bytes(request.path), e.status, clock);
  };
  if (request.method != "GET") return fail(ApiError(405, QStringLiteral("use GET to open the WebSocket /v1/ws")));
  if (!QString::fromLatin1(bytes(request.header("upgrade"))).contains(QLatin1String("websocket"), Qt::CaseInsensitive))
    return fail(ApiError(426, QStringLiteral("/v1/ws is a WebSocket: send the upgrade handshake")),
                {{"Upgrade", "websocket"}, {"Sec-WebSocket-Version", "13"}});
  // QWebSocketServer would close such a handshake without a word: answered here instead.
  if (request.header("sec-websocket-key").empty())
    return fail(ApiError(400, QStringLiteral("a WebSocket handshake needs Sec-WebSocket-Key")));
  // Browsers cannot set headers on a WebSocket, so the key may also be the query's api_key (the Origin check below
  // keeps other sites' pages out; prefer the header elsewhere, as URLs end up in logs).
  QString key = apiserver::bearerKey(request);
  if (key.isEmpty())
    key = QUrlQuery(QString::fromLatin1(bytes(request.query))).queryItemValue(QStringLiteral("api_key"), QUrl::FullyDecoded);
  if (!keyAccepted(key))
    return fail(ApiError(401,
                         QStringLiteral("a valid API key is required (Authorization: Bearer KEY, or ?api_key=KEY)"),
                         {}, QStringLiteral("authentication_error")));
  if (!originAllowed(bytes(request.header("origin"))))
    return fail(ApiError(403,
                         QStringLiteral("pages from the origin '%1' may not open this server's WebSocket (start it "
                                        "with --allow-origin ORIGIN to allow one)")
                             .arg(QString::fromLatin1(bytes(request.header("origin")).left(200))),
                         {}, QStringLiteral("permission_error")));
  // A head with a body was committed as it arrived (onNewConnection): no handshake has one.
  if (!socket->isTransactionStarted() || !request.body.empty())
    return fail(ApiError(400, QStringLiteral("a WebSocket handshake has no body")));
  // The hand-over (see the top of this file): the handshake's bytes go back into the buffer, our reader lets go.
  socket->rollbackTransaction();
  disconnect(socket, &QTcpSocket::readyRead, this, nullptr);
  m_webSocketServer->handleConnection(socket);
}

void ApiServer::onWebSocketConnection() {
  while (QWebSocket* ws = m_webSocketServer->nextPendingConnection()) {
    ws->setParent(this);
    // Qt's limits refuse a larger frame from its header and a larger message as its frames add up, closing the
    // socket with 1009 (message too big), before anything is buffered beyond them.
    ws->setMaxAllowedIncomingFrameSize(quint64(m_options.webSocketMaxMessageBytes));
    ws->setMaxAllowedIncomingMessageSize(quint64(m_options.webSocketMaxMessageBytes));
    m_webSockets.insert(ws, std::make_shared<WebSocketClient>());
    connect(ws, &QWebSocket::textMessageReceived, this, [this, ws](const QString& m) { onWebSocketMessage(ws, m); });
    connect(ws, &QWebSocket::binaryMessageReceived, this, [this, ws] {
      QElapsedTimer clock;
      clock.start();
      sendWebSocketError(ws, QJsonValue(), ApiError(400, QStringLiteral("send requests as text messages of JSON")),
                         "/v1/ws", clock);
    });
    connect(ws, &QWebSocket::disconnected, this, [this, ws] {
      // Every request of the socket is cancelled: their slots free at the scheduler's next step.
      if (const std::shared_ptr<WebSocketClient> client = m_webSockets.take(ws))
        for (const std::shared_ptr<Exchange>& ex : std::as_const(client->inFlight)) cancelExchange(ex, true);
      ws->deleteLater();
    });
    QElapsedTimer none;
    log("GET", "/v1/ws", 101, none);
  }
}

void ApiServer::sendWebSocketError(QWebSocket* socket, const QJsonValue& id, const ApiError& error,
                                   const QByteArray& path, const QElapsedTimer& clock) {
  QJsonObject message = apiErrorBody(error);
  message.insert(QStringLiteral("id"), id);
  if (socket->state() == QAbstractSocket::ConnectedState) socket->sendTextMessage(QString::fromUtf8(json(message)));
  log("WS", path, error.status, clock);
}

void ApiServer::onWebSocketMessage(QWebSocket* ws, const QString& message) {
  QElapsedTimer clock;
  clock.start();
  const std::shared_ptr<WebSocketClient> client = m_webSockets.value(ws);
  if (!client) return;
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(message.toUtf8(), &parseError);
  if (parseError.error != QJsonParseError::NoError || !doc.isObject())
    return sendWebSocketError(ws, QJsonValue(),
                              ApiError(400, QStringLiteral("the message is not a JSON object: %1")
                                                .arg(parseError.error != QJsonParseError::NoError
                                                         ? parseError.errorString()
                                                         : QStringLiteral("another JSON value"))),
                              "/v1/ws", clock);
  const QJsonObject o = doc.object();
  const QJsonValue idValue = o.value(QLatin1String("id"));
  if (!idValue.isUndefined() && !idValue.isNull() &&
      (!idValue.isString() || idValue.toString().isEmpty() || idValue.toString().size() > kMaxClientIdChars))
    return sendWebSocketError(
        ws, QJsonValue(), ApiError(400, QStringLiteral("'id' must be a string of 1 to %1 characters").arg(kMaxClientIdChars),
                                   QStringLiteral("id")),
        "/v1/ws", clock);
  const QString clientId = idValue.toString();
  const QJsonValue replyId = clientId.isEmpty() ? QJsonValue() : QJsonValue(clientId);

  if (o.contains(QLatin1String("cancel"))) {
    const QString target = o.value(QLatin1String("cancel")).toString();
    const std::shared_ptr<Exchange> ex = client->inFlight.value(target);
    if (!ex)
      return sendWebSocketError(ws, o.value(QLatin1String("cancel")),
                                ApiError(404, QStringLiteral("no request with this id is running on this socket"),
                                         QStringLiteral("cancel")),
                                "/v1/ws", clock);
    return cancelExchange(ex, /*clientGone=*/false);  // it ends with its finish chunk and "done"
  }

  const QString endpoint = o.value(QLatin1String("endpoint")).toString();
  const bool chat = endpoint == QLatin1String("/v1/chat/completions");
  if (!chat && endpoint != QLatin1String("/v1/completions"))
    return sendWebSocketError(
        ws, replyId,
        ApiError(400, QStringLiteral("'endpoint' must be \"/v1/chat/completions\" or \"/v1/completions\""),
                 QStringLiteral("endpoint")),
        "/v1/ws", clock);
  const QByteArray path = endpoint.toLatin1();
  if (!o.value(QLatin1String("body")).isObject())
    return sendWebSocketError(
        ws, replyId, ApiError(400, QStringLiteral("'body' must be the request's JSON object"), QStringLiteral("body")),
        path, clock);
  if (!clientId.isEmpty() && client->inFlight.contains(clientId))
    return sendWebSocketError(
        ws, replyId,
        ApiError(400, QStringLiteral("a request with this id is still running on this socket"), QStringLiteral("id")),
        path, clock);
  if (client->inFlight.size() >= m_options.webSocketMaxInFlight)
    return sendWebSocketError(ws, replyId,
                              ApiError(429,
                                       QStringLiteral("this socket has %1 requests in flight already; wait for one "
                                                      "to end")
                                           .arg(m_options.webSocketMaxInFlight),
                                       {}, QStringLiteral("rate_limit_error")),
                              path, clock);

  auto ex = std::make_shared<Exchange>();
  ex->clock = clock;
  ex->viaWebSocket = true;
  ex->webSocket = ws;
  ex->client = client;
  ex->method = "WS";
  ex->path = path;
  ex->id = !clientId.isEmpty() ? clientId
                               : (chat ? QStringLiteral("chatcmpl-") : QStringLiteral("cmpl-")) + QString::number(m_nextId++);
  QJsonObject body = o.value(QLatin1String("body")).toObject();
  body.insert(QStringLiteral("stream"), true);  // a WebSocket always streams
  const Refusal refused = submit(ex, json(body), chat);
  if (refused.error) {
    QJsonObject reply = apiErrorBody(*refused.error);
    reply.insert(QStringLiteral("id"), replyId);
    if (ws->state() == QAbstractSocket::ConnectedState) ws->sendTextMessage(QString::fromUtf8(json(reply)));
    return log(ex->method, ex->path, refused.error->status, ex->clock, refused.logExtra);
  }
  client->inFlight.insert(ex->id, ex);
}
