// The API tests' client side: see api_client.h.
#include "api_client.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QTcpSocket>
#include <QTest>
#include <QTimer>

QJsonObject ApiReply::json() const { return QJsonDocument::fromJson(body).object(); }

ApiReply apiCall(QNetworkAccessManager& net, quint16 port, const QByteArray& method, const QString& path,
                 const QByteArray& body, const QByteArray& key) {
  QNetworkRequest req(QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(port).arg(path)));
  req.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
  if (!key.isEmpty()) req.setRawHeader("Authorization", "Bearer " + key);
  QNetworkReply* r = net.sendCustomRequest(req, method, body);
  QEventLoop loop;
  QObject::connect(r, &QNetworkReply::finished, &loop, &QEventLoop::quit);
  QTimer::singleShot(60000, &loop, &QEventLoop::quit);
  loop.exec();
  ApiReply out;
  out.status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  out.error = r->error();
  out.body = r->readAll();
  r->deleteLater();
  return out;
}

QByteArray rawHttpExchange(quint16 port, const QByteArray& bytes) {
  QTcpSocket raw;
  raw.connectToHost(QHostAddress::LocalHost, port);
  if (!raw.waitForConnected(5000)) return {};
  raw.write(bytes);
  QByteArray answer;
  QElapsedTimer t;
  t.start();
  while (raw.state() == QAbstractSocket::ConnectedState && t.elapsed() < 20000) {
    QTest::qWait(10);
    answer += raw.readAll();
  }
  return answer + raw.readAll();
}

void addStreamChunk(StreamEvents& into, const QJsonObject& chunk, bool chat) {
  ++into.events;
  const QJsonObject c = chunk.value("choices").toArray().at(0).toObject();
  const int i = c.value("index").toInt();
  into.text[i] += chat ? c.value("delta").toObject().value("content").toString() : c.value("text").toString();
  if (c.value("finish_reason").isString()) into.finish[i] = c.value("finish_reason").toString();
}

StreamEvents parseStreamEvents(const QByteArray& body, bool chat) {
  StreamEvents e;
  for (const QByteArray& block : body.split('\n')) {
    if (!block.startsWith("data: ")) continue;
    const QByteArray data = block.mid(6);
    if (data == "[DONE]") {
      ++e.done;
      continue;
    }
    addStreamChunk(e, QJsonDocument::fromJson(data).object(), chat);
  }
  return e;
}
