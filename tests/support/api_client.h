// The API tests' client side (test_api_server, test_server_service): one HTTP request to a local server and its
// answer, raw bytes in and out for what QNetworkAccessManager will not send, and a server-sent-event stream read
// back per choice.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QMap>
#include <QNetworkReply>
#include <QString>

class QNetworkAccessManager;

struct ApiReply {
  int status = 0;
  QNetworkReply::NetworkError error = QNetworkReply::NoError;
  QByteArray body;
  QJsonObject json() const;
};

// `method` `path` on http://127.0.0.1:port with a JSON body and, unless `key` is empty, "Authorization: Bearer key".
// Waits up to a minute for the whole answer.
ApiReply apiCall(QNetworkAccessManager& net, quint16 port, const QByteArray& method, const QString& path,
                 const QByteArray& body = {}, const QByteArray& key = {});

// Writes `bytes` on a fresh connection and returns everything the server sends until it closes (at most 20 s).
QByteArray rawHttpExchange(quint16 port, const QByteArray& bytes);

// The text of every "data:" event of an SSE body, concatenated per choice index; "[DONE]" counted.
struct StreamEvents {
  QMap<int, QString> text;
  QMap<int, QString> finish;
  int done = 0, events = 0;
};
StreamEvents parseStreamEvents(const QByteArray& body, bool chat);
// The same for one chunk object (as an SSE event or a WebSocket message carries it), added to `into`.
void addStreamChunk(StreamEvents& into, const QJsonObject& chunk, bool chat);
