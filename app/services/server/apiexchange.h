// ApiServer's private state shared by its two files (apiserver.cpp: HTTP; apiserver_websocket.cpp: /v1/ws): one
// generation request in flight, and what one WebSocket has in flight.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QSet>
#include <QTcpSocket>
#include <QWebSocket>

#include <atomic>
#include <memory>
#include <vector>

#include "apiserver.h"
#include "httprequestparser.h"

namespace apiserver {

inline QByteArray json(const QJsonObject& o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }
// The parser speaks std::string (it is fuzzed without Qt); the sockets and the log speak QByteArray.
inline QByteArray bytes(std::string_view s) { return QByteArray(s.data(), qsizetype(s.size())); }
// The key of an "Authorization: Bearer KEY" header, or "".
QString bearerKey(const HttpRequest& request);

}  // namespace apiserver

// The requests of one WebSocket still generating, by their id; the socket closing cancels them all.
struct ApiServer::WebSocketClient {
  QHash<QString, std::shared_ptr<Exchange>> inFlight;
};

// One generation request in flight: its choices' results as they end, and the client they go to: an HTTP
// connection (socket) or one request of a WebSocket (webSocket, client).
struct ApiServer::Exchange {
  QPointer<QTcpSocket> socket;
  QPointer<QWebSocket> webSocket;
  std::weak_ptr<WebSocketClient> client;  // expires when the WebSocket closes
  bool viaWebSocket = false;
  ApiGeneration request;
  QString id;  // the completion's id: every chunk's "id" (a WebSocket client's own id when it gave one)
  qint64 created = 0;
  QByteArray method, path;
  QElapsedTimer clock;
  std::vector<engine::GenerationResult> results;
  std::vector<bool> started;  // stream: a choice's first chunk was sent
  std::vector<uint64_t> schedulerIds;
  int remaining = 0;
  std::atomic<bool> gone{false};  // the client disconnected: read by the scheduler's thread
  bool answered = false;          // the response was sent (or refused): later ends answer no one
  QSet<int> filtered;             // choices the content filter stopped
  double firstTokenMs = -1;

  // The client can still be written to.
  bool listening() const {
    if (viaWebSocket) return webSocket && webSocket->state() == QAbstractSocket::ConnectedState;
    return socket && socket->state() == QAbstractSocket::ConnectedState;
  }
  // One chunk of the stream: a server-sent event, or a WebSocket text message with the same JSON.
  void sendChunk(const QJsonObject& chunk) {
    if (!listening()) return;
    const QByteArray text = apiserver::json(chunk);
    if (viaWebSocket)
      webSocket->sendTextMessage(QString::fromUtf8(text));
    else
      socket->write("data: " + text + "\n\n");
  }
};
