// ServerService (the Server page's core) over real sockets: started on a free port over a tiny model, a created
// key gets 200 and a wrong or revoked one 401, requests reach the log and the counters, stopping ends a request in
// flight with a complete response and closes the port, a port in use is a clear error, serving without a key is
// refused off loopback, settings persist, the request log survives a restart, and shutdown (app quit) stops a
// running server.
#include <QAbstractItemModelTester>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "services/appsettings.h"
#include "services/serverrequestlog.h"
#include "services/serverservice.h"
#include "services/store/apikeystore.h"
#include "services/store/database.h"
#include "services/store/serverrequeststore.h"
#include "support/api_client.h"
#include "support/tiny_text_model.h"

using Reply = ApiReply;

class TestServerService : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString m_model, m_longModel;
  QNetworkAccessManager m_net;
  std::unique_ptr<Database> m_db;
  std::unique_ptr<AppSettings> m_settings;
  std::unique_ptr<ServerService> m_service;

  Reply call(int port, const QByteArray& method, const QString& path, const QByteArray& body = {},
             const QString& key = {}) {
    return apiCall(m_net, quint16(port), method, path, body, key.toUtf8());
  }

  Reply chat(int port, const QString& key, int maxTokens = 4) {
    const QByteArray body = QJsonDocument(QJsonObject{
                                              {"model", "tiny"},
                                              {"max_tokens", maxTokens},
                                              {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "hi"}}}},
                                          })
                                .toJson(QJsonDocument::Compact);
    return call(port, "POST", QStringLiteral("/v1/chat/completions"), body, key);
  }

  void startService(const QString& model) {
    m_service->setAppModel(model, QStringLiteral("tiny"));
    m_service->start();
    QCOMPARE(m_service->state(), QStringLiteral("starting"));
    QTRY_VERIFY2_WITH_TIMEOUT(m_service->state() != QLatin1String("starting"), qPrintable(m_service->error()), 30000);
    QVERIFY2(m_service->running(), qPrintable(m_service->error()));
    QVERIFY(m_service->listeningPort() > 0);
  }

  void stopService() {
    m_service->stop();
    QTRY_COMPARE_WITH_TIMEOUT(m_service->state(), QStringLiteral("stopped"), 30000);
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QVERIFY(m_dir.isValid());
    m_model = m_dir.filePath(QStringLiteral("tiny"));
    writeTinyTextModel(m_model, 5, 128);
    m_longModel = m_dir.filePath(QStringLiteral("long"));
    writeTinyTextModel(m_longModel, 5, 4096);
  }

  void init() {
    QSettings().clear();
    QFile::remove(m_dir.filePath(QStringLiteral("db.sqlite")));
    m_db = std::make_unique<Database>();
    QCOMPARE(m_db->open(m_dir.filePath(QStringLiteral("db.sqlite"))), Database::OpenState::Ok);
    m_settings = std::make_unique<AppSettings>();
    m_settings->setThreads(2);
    m_service = std::make_unique<ServerService>(m_settings.get(), new ApiKeyStore(*m_db));
    m_service->setPort(0);  // any free port
  }

  void cleanup() {
    m_service.reset();
    m_settings.reset();
    m_db.reset();
  }

  void createdKeyServesAndRevokedKeyIsRefused() {
    QSignalSpy keysChanged(m_service.get(), &ServerService::keysChanged);
    const QString key = m_service->createKey(QStringLiteral("script"));
    QVERIFY(key.startsWith(QStringLiteral("sk-wb-")));
    QCOMPARE(keysChanged.size(), 1);
    QCOMPARE(m_service->keys().size(), 1);
    const qint64 id = m_service->keys().first().toMap().value(QStringLiteral("id")).toLongLong();
    QCOMPARE(m_service->keys().first().toMap().value(QStringLiteral("lastUsed")).toString(), QString());

    startService(m_model);
    const int port = m_service->listeningPort();
    QCOMPARE(m_service->url(), QStringLiteral("http://127.0.0.1:%1").arg(port));
    QCOMPARE(m_service->servedModelName(), QStringLiteral("tiny"));
    QVERIFY(m_service->slotCapacity() > 0);
    QVERIFY(m_service->curlExample().contains(QStringLiteral("http://127.0.0.1:%1/v1/chat/completions").arg(port)));
    QVERIFY(m_service->curlExample().contains(QStringLiteral("Authorization: Bearer $WB_API_KEY")));
    QVERIFY(m_service->pythonExample().contains(QStringLiteral("base_url=\"http://127.0.0.1:%1/v1\"").arg(port)));
    QVERIFY(m_service->pythonExample().contains(QStringLiteral("model=\"tiny\"")));

    QCOMPARE(call(port, "GET", QStringLiteral("/health")).status, 200);
    Reply models = call(port, "GET", QStringLiteral("/v1/models"), {}, key);
    QCOMPARE(models.status, 200);
    const QJsonArray listed = QJsonDocument::fromJson(models.body).object().value("data").toArray();
    QCOMPARE(listed.size(), 1);
    QCOMPARE(listed.at(0).toObject().value("id").toString(), QStringLiteral("tiny"));
    const Reply ok = chat(port, key);
    QCOMPARE(ok.status, 200);
    QCOMPARE(QJsonDocument::fromJson(ok.body).object().value("object").toString(), QStringLiteral("chat.completion"));
    QCOMPARE(chat(port, QString()).status, 401);
    QCOMPARE(chat(port, key + QLatin1Char('0')).status, 401);

    // The log: newest first, one row per answered request, as the page lists them.
    QTRY_COMPARE(m_service->requestsServed(), 5);
    QCOMPARE(m_service->requestsFailed(), 2);
    ServerRequestLog* log = m_service->requestLog();
    QAbstractItemModelTester tester(log, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(log->rowCount(), 5);
    QCOMPARE(log->entryAt(0).value(QStringLiteral("status")).toInt(), 401);
    const QVariantMap served = log->entryAt(2);
    QCOMPARE(served.value(QStringLiteral("path")).toString(), QStringLiteral("/v1/chat/completions"));
    QCOMPARE(served.value(QStringLiteral("status")).toInt(), 200);
    QVERIFY(served.value(QStringLiteral("completionTokens")).toInt() > 0);
    QVERIFY(served.value(QStringLiteral("ms")).toDouble() > 0);
    QCOMPARE(log->data(log->index(2), ServerRequestLog::PathRole).toString(), QStringLiteral("/v1/chat/completions"));
    QTRY_VERIFY(m_service->generatedTokens() > 0);  // the counters arrive twice a second
    // The key's use is recorded.
    QTRY_VERIFY(!m_service->keys().first().toMap().value(QStringLiteral("lastUsed")).toString().isEmpty());

    // Revoked: refused from the next request on, without a restart.
    QVERIFY(m_service->revokeKey(id));
    QVERIFY(m_service->keys().isEmpty());
    QCOMPARE(chat(port, key).status, 401);

    stopService();
    QVERIFY(m_service->url().isEmpty());
    const Reply refused = call(port, "GET", QStringLiteral("/health"));
    QCOMPARE(refused.error, QNetworkReply::ConnectionRefusedError);
  }

  void stopEndsARequestInFlight() {
    const QString key = m_service->createKey(QStringLiteral("k"));
    m_service->setParallel(1);
    startService(m_longModel);
    const int port = m_service->listeningPort();
    // A streamed request far longer than the test: 16 choices of 4000 tokens, one slot, so they run in turn.
    QNetworkRequest req(QUrl(QStringLiteral("http://127.0.0.1:%1/v1/completions").arg(port)));
    req.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    req.setRawHeader("Authorization", "Bearer " + key.toUtf8());
    QNetworkReply* r =
        m_net.post(req, R"({"prompt": "once", "max_tokens": 4000, "n": 16, "stream": true, "ignore_eos": true})");
    QByteArray body;
    connect(r, &QNetworkReply::readyRead, this, [&] { body += r->readAll(); });
    QTRY_VERIFY_WITH_TIMEOUT(body.contains("data: "), 30000);
    m_service->stop();
    QCOMPARE(m_service->state(), QStringLiteral("stopping"));
    QTRY_VERIFY_WITH_TIMEOUT(r->isFinished(), 10000);
    body += r->readAll();
    // A complete stream: every choice's last event and [DONE], not a reset connection.
    QCOMPARE(r->error(), QNetworkReply::NoError);
    QVERIFY2(body.endsWith("data: [DONE]\n\n"), body.right(200).constData());
    r->deleteLater();
    // Cancelled, not run to its end, and logged like any answered request.
    QTRY_COMPARE(m_service->requestLog()->rowCount(), 1);
    const QVariantMap entry = m_service->requestLog()->entryAt(0);
    QCOMPARE(entry.value(QStringLiteral("status")).toInt(), 200);
    QVERIFY2(entry.value(QStringLiteral("completionTokens")).toLongLong() < 16 * 4000,
             qPrintable(entry.value(QStringLiteral("completionTokens")).toString()));
    QTRY_COMPARE_WITH_TIMEOUT(m_service->state(), QStringLiteral("stopped"), 10000);
    QCOMPARE(m_service->activeRequests(), 0);
    QCOMPARE(call(port, "GET", QStringLiteral("/health")).error, QNetworkReply::ConnectionRefusedError);
  }

  void requestLogSurvivesARestart() {
    // As the app builds it: the log over the database's request store.
    m_service = std::make_unique<ServerService>(m_settings.get(), new ApiKeyStore(*m_db), new ServerRequestStore(*m_db));
    m_service->setPort(0);
    m_service->setRequireKey(false);
    startService(m_model);
    const int port = m_service->listeningPort();
    QCOMPARE(call(port, "GET", QStringLiteral("/v1/models")).status, 200);
    QCOMPARE(chat(port, QString()).status, 200);
    QTRY_COMPARE(m_service->requestLog()->rowCount(), 2);
    stopService();
    m_service.reset();  // the app quits

    m_service = std::make_unique<ServerService>(m_settings.get(), new ApiKeyStore(*m_db), new ServerRequestStore(*m_db));
    ServerRequestLog* log = m_service->requestLog();
    QCOMPARE(log->rowCount(), 2);
    QCOMPARE(log->entryAt(0).value(QStringLiteral("path")).toString(), QStringLiteral("/v1/chat/completions"));
    QVERIFY(log->entryAt(0).value(QStringLiteral("completionTokens")).toLongLong() > 0);
    QCOMPARE(log->entryAt(1).value(QStringLiteral("path")).toString(), QStringLiteral("/v1/models"));
    // Starting again keeps the history; new requests go on top.
    m_service->setPort(0);
    startService(m_model);
    QCOMPARE(log->rowCount(), 2);
    QCOMPARE(call(m_service->listeningPort(), "GET", QStringLiteral("/health")).status, 200);
    QTRY_COMPARE(log->rowCount(), 3);
    QCOMPARE(log->entryAt(0).value(QStringLiteral("path")).toString(), QStringLiteral("/health"));
    stopService();
  }

  void portInUseIsAClearError() {
    QTcpServer holder;
    QVERIFY(holder.listen(QHostAddress::LocalHost, 0));
    m_service->setPort(holder.serverPort());
    m_service->setAppModel(m_model, QStringLiteral("tiny"));
    QSignalSpy inUse(m_service.get(), &ServerService::portInUse);
    m_service->start();
    QTRY_COMPARE_WITH_TIMEOUT(m_service->state(), QStringLiteral("stopped"), 30000);
    QCOMPARE(inUse.size(), 1);
    QVERIFY2(m_service->error().contains(QStringLiteral("Port %1 on 127.0.0.1 is already in use").arg(holder.serverPort())),
             qPrintable(m_service->error()));
    // Another port works at once.
    m_service->setPort(0);
    startService(m_model);
    QVERIFY(m_service->error().isEmpty());
    stopService();
  }

  void noKeyOnlyOnLoopback() {
    m_service->setAppModel(m_model, QStringLiteral("tiny"));
    m_service->setRequireKey(false);
    m_service->setHost(QStringLiteral("0.0.0.0"));
    QVERIFY(!m_service->exposureWarning().isEmpty());
    QVERIFY(m_service->settingsProblem().contains(QStringLiteral("without an API key")));
    m_service->start();
    QCOMPARE(m_service->state(), QStringLiteral("stopped"));
    QVERIFY(m_service->error().contains(QStringLiteral("without an API key")));

    m_service->setHost(QStringLiteral("not an address"));
    QVERIFY(m_service->settingsProblem().contains(QStringLiteral("not an IP address")));

    m_service->setHost(QStringLiteral("localhost"));
    QCOMPARE(m_service->host(), QStringLiteral("127.0.0.1"));
    QVERIFY(m_service->exposureWarning().isEmpty());
    QVERIFY(m_service->settingsProblem().isEmpty());
    startService(m_model);
    QCOMPARE(chat(m_service->listeningPort(), QString()).status, 200);
    QVERIFY(!m_service->curlExample().contains(QStringLiteral("Authorization")));
    stopService();
  }

  void noModelIsAClearError() {
    QVERIFY(m_service->settingsProblem().contains(QStringLiteral("No model")));
    m_service->start();
    QCOMPARE(m_service->state(), QStringLiteral("stopped"));
    QVERIFY(!m_service->error().isEmpty());
    // A model that is not there fails its start with the loader's reason.
    m_service->setModelPath(m_dir.filePath(QStringLiteral("missing")));
    m_service->start();
    QTRY_COMPARE_WITH_TIMEOUT(m_service->state(), QStringLiteral("stopped"), 30000);
    QVERIFY2(m_service->error().contains(QStringLiteral("missing")), qPrintable(m_service->error()));
  }

  void settingsPersist() {
    m_service->setHost(QStringLiteral("0.0.0.0"));
    m_service->setPort(9123);
    m_service->setParallel(2);
    m_service->setQueueSize(8);
    m_service->setContextTokens(64);
    m_service->setAllowedHosts(QStringLiteral(" box.lan ,, other "));
    QCOMPARE(m_service->allowedHosts(), QStringLiteral("box.lan, other"));
    ServerService again(m_settings.get(), new ApiKeyStore(*m_db));
    QCOMPARE(again.host(), QStringLiteral("0.0.0.0"));
    QCOMPARE(again.port(), 9123);
    QCOMPARE(again.parallel(), 2);
    QCOMPARE(again.queueSize(), 8);
    QCOMPARE(again.contextTokens(), 64);
    QCOMPARE(again.allowedHosts(), QStringLiteral("box.lan, other"));
    QVERIFY(again.requireKey());
    again.resetSettings();
    QCOMPARE(m_settings->serverSettings(), QVariantMap{});
  }

  void shutdownStopsARunningServer() {
    m_service->setRequireKey(false);
    startService(m_model);
    const int port = m_service->listeningPort();
    m_service->shutdown();
    QCOMPARE(call(port, "GET", QStringLiteral("/health")).error, QNetworkReply::ConnectionRefusedError);
    m_service->start();  // after shutdown, nothing starts
    QCOMPARE(m_service->state(), QStringLiteral("stopped"));
  }
};

QTEST_GUILESS_MAIN(TestServerService)
#include "test_server_service.moc"
