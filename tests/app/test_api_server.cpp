// The OpenAI-compatible API (app/services/server): the HTTP request parser on any split of its bytes and on bad
// input; then a server on a free port over a tiny model, spoken to over real sockets: health, keys, the model
// list, completions and chat completions equal to a plain Generator's greedy output, the same text streamed as
// server-sent events, n choices, refusals naming their parameter, a full queue answering 503, a client that hangs
// up freeing its slot, and malformed HTTP.
#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "engine/chat_template.h"
#include "engine/generator.h"
#include "engine/model_loader.h"
#include "services/server/apiserver.h"
#include "services/server/httprequestparser.h"
#include "support/tiny_text_model.h"

namespace {

struct Reply {
  int status = 0;
  QByteArray body;
  QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
};

// The text of every "data:" event of an SSE body, concatenated per choice index; "[DONE]" counted.
struct Events {
  QMap<int, QString> text;
  QMap<int, QString> finish;
  int done = 0, events = 0;
};

Events parseEvents(const QByteArray& body, bool chat) {
  Events e;
  for (const QByteArray& block : body.split('\n')) {
    if (!block.startsWith("data: ")) continue;
    const QByteArray data = block.mid(6);
    if (data == "[DONE]") {
      ++e.done;
      continue;
    }
    ++e.events;
    const QJsonObject c = QJsonDocument::fromJson(data).object().value("choices").toArray().at(0).toObject();
    const int i = c.value("index").toInt();
    e.text[i] += chat ? c.value("delta").toObject().value("content").toString() : c.value("text").toString();
    if (c.value("finish_reason").isString()) e.finish[i] = c.value("finish_reason").toString();
  }
  return e;
}

}  // namespace

class TestApiServer : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  std::unique_ptr<engine::Model> m_model;
  std::unique_ptr<engine::Backend> m_be = engine::make_cpu_backend(2);
  QNetworkAccessManager m_net;

  std::unique_ptr<engine::Model> m_longModel;  // a long context, so one reply can outlast a test's checks

  std::unique_ptr<ApiServer> start(int parallel = 2, int queue = 8, QStringList keys = {QStringLiteral("sk-1")},
                                   const engine::Model* model = nullptr, QStringList blocked = {}) {
    ApiServer::Options o;
    o.port = 0;
    o.apiKeys = keys;
    o.modelName = QStringLiteral("tiny");
    o.batch.parallel = parallel;
    o.batch.max_queue = queue;
    o.blockedPhrases = blocked;
    auto s = std::make_unique<ApiServer>(model ? *model : *m_model, *m_be, o);
    QString error;
    if (!s->listen(&error)) qFatal("%s", qPrintable(error));
    return s;
  }

  Reply call(ApiServer& s, const QByteArray& method, const QString& path, const QByteArray& body = {},
             const QByteArray& key = "sk-1") {
    QNetworkRequest req(QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(s.port()).arg(path)));
    req.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    if (!key.isEmpty()) req.setRawHeader("Authorization", "Bearer " + key);
    QNetworkReply* r = m_net.sendCustomRequest(req, method, body);
    QEventLoop loop;
    connect(r, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(60000, &loop, &QEventLoop::quit);
    loop.exec();
    Reply out;
    out.status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    out.body = r->readAll();
    r->deleteLater();
    return out;
  }

  // What a plain Generator gives greedily for these ids.
  engine::GenerationResult reference(const std::vector<int32_t>& prompt, int maxTokens,
                                     const std::vector<std::string>& stop = {}) {
    engine::Generator gen(*m_model, *m_be);
    engine::GenerateParams p;
    p.max_tokens = maxTokens;
    p.sampler.temperature = 0;
    p.sampler.top_k = 0;
    p.sampler.min_p = 0;
    p.sampler.top_p = 1;
    p.sampler.repeat_last_n = -1;
    p.stop = stop;
    return gen.generate(prompt, p);
  }

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    writeTinyTextModel(m_dir.path() + QStringLiteral("/m"), 5, 128);
    m_model = engine::load_model((m_dir.path() + QStringLiteral("/m")).toStdString());
    writeTinyTextModel(m_dir.path() + QStringLiteral("/long"), 5, 4096);
    m_longModel = engine::load_model((m_dir.path() + QStringLiteral("/long")).toStdString());
  }

  void parser_reads_any_split_and_refuses_bad_requests() {
    const std::string raw = "POST /v1/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
                            "Authorization:  Bearer k \r\n\r\nhello";
    for (size_t cut = 0; cut <= raw.size(); ++cut) {
      HttpRequestParser p;
      p.feed(std::string_view(raw).substr(0, cut));
      QCOMPARE(p.feed(std::string_view(raw).substr(cut)), HttpRequestParser::State::Complete);
      QCOMPARE(p.request().method, std::string("POST"));
      QCOMPARE(p.request().path, std::string("/v1/completions"));
      QCOMPARE(p.request().query, std::string("x=1"));
      QCOMPARE(p.request().header("authorization"), std::string_view("Bearer k"));
      QCOMPARE(p.request().body, std::string("hello"));
      QCOMPARE(p.consumed(), raw.size());
    }
    const auto status = [](const std::string& bytes) {
      HttpRequestParser p;
      return p.feed(bytes) == HttpRequestParser::State::Failed ? p.errorStatus() : 0;
    };
    QCOMPARE(status("GARBAGE\r\n\r\n"), 400);
    QCOMPARE(status("get / HTTP/1.1\r\n\r\n"), 400);
    QCOMPARE(status("GET  / HTTP/1.1\r\n\r\n"), 400);
    QCOMPARE(status("GET / HTTP/2\r\n\r\n"), 505);
    QCOMPARE(status("POST / HTTP/1.1\r\n\r\n"), 411);
    QCOMPARE(status("POST / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n"), 413);
    QCOMPARE(status("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n"), 400);
    QCOMPARE(status("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n"), 400);
    QCOMPARE(status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 501);
    QCOMPARE(status("GET / HTTP/1.1\r\nno colon\r\n\r\n"), 400);
    // Where lenient parsers disagree about a request's end (smuggling), ours refuses: a blank before the colon,
    // a folded line, a CR or NUL inside a value or the target.
    QCOMPARE(status("POST / HTTP/1.1\r\nContent-Length : 1\r\n\r\nx"), 400);
    QCOMPARE(status("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n"), 400);
    QCOMPARE(status("GET / HTTP/1.1\r\nA: b\rContent-Length: 1\r\n\r\n"), 400);
    QCOMPARE(status(std::string("GET / HTTP/1.1\r\nA: b") + '\0' + "c\r\n\r\n"), 400);
    QCOMPARE(status("GET /a\rb HTTP/1.1\r\n\r\n"), 400);
    QCOMPARE(status("GET / HTTP/1.1\r\nX: " + std::string(HttpRequestParser::kMaxHeaderBytes, 'a')), 431);
    HttpRequestParser get;
    QCOMPARE(get.feed("GET /health HTTP/1.0\r\n\r\n"), HttpRequestParser::State::Complete);
    QCOMPARE(get.request().header("host"), std::string_view());
  }

  void parser_memory_is_bounded_by_its_limits_not_by_the_input() {
    // One huge piece with no end of head: only the limit is taken, then 431.
    HttpRequestParser head;
    QCOMPARE(head.feed("GET / HTTP/1.1\r\nX: " + std::string(10 * HttpRequestParser::kMaxHeaderBytes, 'a')),
             HttpRequestParser::State::Failed);
    QCOMPARE(head.errorStatus(), 431);
    QCOMPARE(head.consumed(), HttpRequestParser::kMaxHeaderBytes);
    // A body and then a pipelined second request in the same piece: the body's bytes only.
    const std::string first = "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc";
    HttpRequestParser body;
    QCOMPARE(body.feed(first + "GET /next HTTP/1.1\r\n\r\n" + std::string(1 << 20, 'z')),
             HttpRequestParser::State::Complete);
    QCOMPARE(body.request().body, std::string("abc"));
    QCOMPARE(body.consumed(), first.size());
    QCOMPARE(body.buffered(), size_t(3));
    QCOMPARE(body.feed("more"), HttpRequestParser::State::Complete);  // after the request: ignored
    QCOMPARE(body.consumed(), first.size());
    // A body arriving byte by byte is held up to its Content-Length, never more.
    HttpRequestParser slow;
    slow.feed("POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\n");
    for (const char c : std::string("wxyz")) {
      QCOMPARE(slow.state(), HttpRequestParser::State::Incomplete);
      slow.feed(std::string_view(&c, 1));
      QVERIFY(slow.buffered() <= 4);
    }
    QCOMPARE(slow.state(), HttpRequestParser::State::Complete);
    QCOMPARE(slow.request().body, std::string("wxyz"));
  }

  void health_keys_and_models() {
    auto s = start();
    QCOMPARE(call(*s, "GET", "/health", {}, {}).status, 200);
    const Reply noKey = call(*s, "GET", "/v1/models", {}, {});
    QCOMPARE(noKey.status, 401);
    QCOMPARE(noKey.json().value("error").toObject().value("type").toString(), QStringLiteral("authentication_error"));
    QCOMPARE(call(*s, "GET", "/v1/models", {}, "sk-wrong").status, 401);
    const Reply models = call(*s, "GET", "/v1/models");
    QCOMPARE(models.status, 200);
    QCOMPARE(models.json().value("data").toArray().at(0).toObject().value("id").toString(), QStringLiteral("tiny"));
    QCOMPARE(call(*s, "GET", "/v2/nothing").status, 404);
    QCOMPARE(call(*s, "GET", "/v1/completions").status, 405);
    auto open = start(2, 8, {});
    QCOMPARE(call(*open, "GET", "/v1/models", {}, {}).status, 200);  // no keys configured: none needed
  }

  void completions_equal_a_plain_generator_and_stream_the_same_text() {
    auto s = start();
    const QByteArray body = R"({"model":"tiny","prompt":"abc def","max_tokens":12,"temperature":0})";
    const Reply r = call(*s, "POST", "/v1/completions", body);
    QCOMPARE(r.status, 200);
    const QJsonObject o = r.json();
    QCOMPARE(o.value("object").toString(), QStringLiteral("text_completion"));
    const std::vector<int32_t> ids = m_model->tokenizer()->encode("abc def");
    const engine::GenerationResult want = reference(ids, 12);
    const QJsonObject choice = o.value("choices").toArray().at(0).toObject();
    QCOMPARE(choice.value("text").toString(), QString::fromStdString(want.text));
    QCOMPARE(choice.value("finish_reason").toString(), QStringLiteral("length"));
    QCOMPARE(o.value("usage").toObject().value("prompt_tokens").toInt(), int(ids.size()));
    QCOMPARE(o.value("usage").toObject().value("completion_tokens").toInt(), 12);

    QByteArray streaming = body;
    streaming.replace("\"temperature\":0", "\"temperature\":0,\"stream\":true");
    const Reply st = call(*s, "POST", "/v1/completions", streaming);
    QCOMPARE(st.status, 200);
    const Events e = parseEvents(st.body, false);
    QCOMPARE(e.text.value(0), QString::fromStdString(want.text));
    QCOMPARE(e.finish.value(0), QStringLiteral("length"));
    QCOMPARE(e.done, 1);
    QVERIFY(e.events >= 2);
  }

  void chat_completions_use_the_template_and_n_choices() {
    auto s = start();
    const QByteArray body =
        R"({"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi there"}]}],
            "max_tokens":10,"temperature":0,"n":3,"logprobs":true,"top_logprobs":2})";
    const Reply r = call(*s, "POST", "/v1/chat/completions", body);
    QCOMPARE(r.status, 200);
    const std::vector<engine::ChatMessage> messages = {{"system", "be brief"}, {"user", "hi there"}};
    const engine::ChatTemplate& t = m_model->chat_template();
    const std::vector<int32_t> ids = engine::encode_chat(*m_model->tokenizer(), t.render(messages, true), messages);
    const engine::GenerationResult want = reference(ids, 10, t.stop_strings());
    const QJsonArray choices = r.json().value("choices").toArray();
    QCOMPARE(choices.size(), 3);
    for (int i = 0; i < 3; ++i) {  // greedy: every choice is the same
      const QJsonObject c = choices.at(i).toObject();
      QCOMPARE(c.value("index").toInt(), i);
      QCOMPARE(c.value("message").toObject().value("content").toString(), QString::fromStdString(want.text));
      const QJsonArray lp = c.value("logprobs").toObject().value("content").toArray();
      QCOMPARE(lp.size(), int(want.tokens.size()));
      QVERIFY(std::abs(lp.at(0).toObject().value("logprob").toDouble() - want.tokens[0].logprob) < 1e-4);
      QCOMPARE(lp.at(0).toObject().value("top_logprobs").toArray().size(), 2);
    }
    QCOMPARE(r.json().value("usage").toObject().value("completion_tokens").toInt(), 3 * int(want.tokens.size()));
  }

  void bad_requests_name_their_parameter() {
    auto s = start();
    const auto param = [&](const QByteArray& path, const QByteArray& body) {
      const Reply r = call(*s, "POST", QString::fromLatin1(path), body);
      return r.status == 400 ? r.json().value("error").toObject().value("param").toString() : QStringLiteral("status %1").arg(r.status);
    };
    QCOMPARE(param("/v1/chat/completions", R"({"messages":[]})"), QStringLiteral("messages"));
    QCOMPARE(param("/v1/chat/completions", R"({"messages":[{"role":"robot","content":"x"}]})"), QStringLiteral("messages[0].role"));
    QCOMPARE(param("/v1/completions", R"({"prompt":"x","temperature":"hot"})"), QStringLiteral("temperature"));
    QCOMPARE(param("/v1/completions", R"({"prompt":"x","temperature":3})"), QStringLiteral("temperature"));
    QCOMPARE(param("/v1/completions", R"({"prompt":"x","max_tokens":-1})"), QStringLiteral("max_tokens"));
    QCOMPARE(param("/v1/completions", R"({"prompt":"x","n":0})"), QStringLiteral("n"));
    QCOMPARE(param("/v1/completions", R"({"prompt":"x","logit_bias":{"99999":1}})"), QStringLiteral("logit_bias"));
    QCOMPARE(param("/v1/completions", R"({"prompt":"x","stop":[1]})"), QStringLiteral("stop"));
    QCOMPARE(param("/v1/completions", R"({"prompt":["a","b"]})"), QStringLiteral("prompt"));
    QCOMPARE(param("/v1/completions", R"({"prompt":"x","ignore_eos":1})"), QStringLiteral("ignore_eos"));
    QCOMPARE(param("/v1/completions", "{\"prompt\":\"" + QByteArray(200, 'q') + "\"}"), QStringLiteral("prompt"));
    const Reply notJson = call(*s, "POST", "/v1/completions", "{not json");
    QCOMPARE(notJson.status, 400);
    QVERIFY(notJson.json().value("error").toObject().value("message").toString().contains("JSON"));
  }

  void a_full_queue_answers_busy_and_a_hang_up_frees_the_slot() {
    auto s = start(1, 0, {QStringLiteral("sk-1")}, m_longModel.get());
    // A long streamed request over a raw socket holds the only slot; the client then hangs up.
    QTcpSocket hog;
    hog.connectToHost(QHostAddress::LocalHost, s->port());
    QVERIFY(hog.waitForConnected(5000));
    const QByteArray body = R"({"prompt":"abc","max_tokens":4000,"stream":true})";
    hog.write("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk-1\r\nContent-Length: " +
              QByteArray::number(body.size()) + "\r\n\r\n" + body);
    QTRY_VERIFY_WITH_TIMEOUT(hog.peek(1 << 16).contains("data: "), 10000);  // tokens are streaming
    QCOMPARE(s->counters().running, 1);
    const Reply busy = call(*s, "POST", "/v1/completions", R"({"prompt":"x","max_tokens":2})");
    QCOMPARE(busy.status, 503);
    QCOMPARE(busy.json().value("error").toObject().value("type").toString(), QStringLiteral("server_busy"));
    hog.abort();
    QTRY_COMPARE_WITH_TIMEOUT(s->counters().running, 0, 10000);
    QVERIFY(s->counters().generated_tokens < 4000);  // cancelled, not run to the end
    QCOMPARE(call(*s, "POST", "/v1/completions", R"({"prompt":"x","max_tokens":2})").status, 200);
  }

  // Raw bytes in, the whole answer out (the server closes the connection after one request).
  QByteArray rawExchange(ApiServer& s, const QByteArray& bytes) {
    QTcpSocket raw;
    raw.connectToHost(QHostAddress::LocalHost, s.port());
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

  void host_header_allowlist_and_body_limit() {
    auto s = start();
    const QByteArray models = "GET /v1/models HTTP/1.1\r\nAuthorization: Bearer sk-1\r\n";
    QVERIFY(rawExchange(*s, models + "Host: 127.0.0.1:" + QByteArray::number(s->port()) + "\r\n\r\n").startsWith("HTTP/1.1 200"));
    QVERIFY(rawExchange(*s, models + "Host: localhost:" + QByteArray::number(s->port()) + "\r\n\r\n").startsWith("HTTP/1.1 200"));
    const QByteArray rebinding = rawExchange(*s, models + "Host: attacker.example:" + QByteArray::number(s->port()) + "\r\n\r\n");
    QVERIFY2(rebinding.startsWith("HTTP/1.1 403"), rebinding.left(200).constData());
    QVERIFY(rebinding.contains("permission_error"));
    QVERIFY(rawExchange(*s, models + "\r\n").startsWith("HTTP/1.1 403"));  // no Host at all
    const QByteArray big = rawExchange(*s, "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                                               QByteArray::number(9 * 1024 * 1024) + "\r\n\r\n");
    QVERIFY2(big.startsWith("HTTP/1.1 413"), big.left(100).constData());
  }

  void the_content_filter_refuses_prompts_and_stops_replies() {
    // A phrase from the middle of the greedy reply: the reply stops before it, with finish_reason content_filter.
    const std::vector<int32_t> ids = m_model->tokenizer()->encode("abc def");
    const std::string free = reference(ids, 24).text;
    QVERIFY(free.size() > 8);
    const QString phrase = QString::fromStdString(free.substr(free.size() / 2, 3));
    auto s = start(2, 8, {QStringLiteral("sk-1")}, nullptr, {phrase, QStringLiteral("forbidden")});
    const Reply r = call(*s, "POST", "/v1/completions", R"({"prompt":"abc def","max_tokens":24,"temperature":0})");
    QCOMPARE(r.status, 200);
    const QJsonObject c = r.json().value("choices").toArray().at(0).toObject();
    QCOMPARE(c.value("finish_reason").toString(), QStringLiteral("content_filter"));
    QVERIFY(!c.value("text").toString().contains(phrase));
    QVERIFY(QString::fromStdString(free).startsWith(c.value("text").toString()));
    const Reply refused = call(*s, "POST", "/v1/completions", R"({"prompt":"a forbidden word","max_tokens":4})");
    QCOMPARE(refused.status, 400);
    QCOMPARE(refused.json().value("error").toObject().value("type").toString(), QStringLiteral("content_filter"));
  }

  void malformed_http_gets_an_answer_and_the_server_goes_on() {
    auto s = start();
    QTcpSocket raw;
    raw.connectToHost(QHostAddress::LocalHost, s->port());
    QVERIFY(raw.waitForConnected(5000));
    raw.write("BLAH\r\n\r\n");
    QByteArray answer;
    QTRY_VERIFY_WITH_TIMEOUT((answer += raw.readAll(), answer.contains("\r\n\r\n")), 5000);
    QVERIFY(answer.startsWith("HTTP/1.1 400"));
    QCOMPARE(call(*s, "GET", "/health", {}, {}).status, 200);
  }

  void an_unfinished_request_times_out_and_health_counts_connections() {
    ApiServer::Options o;
    o.port = 0;
    o.modelName = QStringLiteral("tiny");
    o.requestTimeoutMs = 300;
    ApiServer s(*m_model, *m_be, o);
    QString error;
    QVERIFY2(s.listen(&error), qPrintable(error));
    QTcpSocket slow;
    slow.connectToHost(QHostAddress::LocalHost, s.port());
    QVERIFY(slow.waitForConnected(5000));
    slow.write("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"prompt\"");
    QTRY_COMPARE_WITH_TIMEOUT(s.openConnections(), 1, 5000);
    const QJsonObject health = call(s, "GET", "/health", {}, {}).json();
    QCOMPARE(health.value("status").toString(), QStringLiteral("ok"));
    QCOMPARE(health.value("connections").toInt(), 1);  // the unfinished one, not the asking one
    QCOMPARE(health.value("running").toInt(), 0);
    QCOMPARE(health.value("queued").toInt(), 0);
    QByteArray answer;
    QTRY_VERIFY_WITH_TIMEOUT((answer += slow.readAll(), slow.state() != QAbstractSocket::ConnectedState), 5000);
    answer += slow.readAll();
    QVERIFY2(answer.startsWith("HTTP/1.1 408"), answer.left(100).constData());
    QTRY_COMPARE_WITH_TIMEOUT(s.openConnections(), 0, 5000);
  }
};

QTEST_GUILESS_MAIN(TestApiServer)
#include "test_api_server.moc"
