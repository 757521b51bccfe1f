// The OpenAI-compatible API (app/services/server): the HTTP request parser on any split of its bytes and on bad
// input; then a server on a free port over a tiny model, spoken to over real sockets: health, keys, the model
// list, completions and chat completions equal to a plain Generator's greedy output, the same text streamed as
// server-sent events, n choices, refusals naming their parameter, a full queue answering 503, a client that hangs
// up freeing its slot, and malformed HTTP; then the WebSocket endpoint /v1/ws with QWebSocket as the client: the
// same chunks as SSE, the upgrade's key / Host / Origin checks, bad messages answered on a socket that stays open,
// closing and {"cancel"} freeing the slot, and its message and in-flight limits.
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
#include <QWebSocket>
#include <QtTest>

#include "engine/chat_template.h"
#include "engine/generator.h"
#include "engine/model_loader.h"
#include "services/server/apiserver.h"
#include "services/server/httprequestparser.h"
#include "support/api_client.h"
#include "support/tiny_text_model.h"

namespace {

using Reply = ApiReply;

// A client of /v1/ws: every message the server sends, as JSON, in order.
class WsClient : public QObject {
 public:
  explicit WsClient(const QString& origin = {}) : ws(origin) {
    connect(&ws, &QWebSocket::textMessageReceived, this,
            [this](const QString& m) { messages << QJsonDocument::fromJson(m.toUtf8()).object(); });
    connect(&ws, &QWebSocket::disconnected, this, [this] { closed = true; });
  }
  // Opens ws://127.0.0.1:port/v1/ws with the key as a header (none when empty); true once connected.
  bool open(quint16 port, const QByteArray& key = "sk-1", const QString& query = {}) {
    QNetworkRequest req(QUrl(QStringLiteral("ws://127.0.0.1:%1/v1/ws%2").arg(port).arg(query)));
    if (!key.isEmpty()) req.setRawHeader("Authorization", "Bearer " + key);
    ws.open(req);
    QElapsedTimer t;
    t.start();
    while (ws.state() != QAbstractSocket::ConnectedState && !closed && t.elapsed() < 5000) QTest::qWait(5);
    return ws.state() == QAbstractSocket::ConnectedState;
  }
  void send(const QJsonObject& o) { ws.sendTextMessage(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact))); }
  // The messages about request `id` (its chunks, its end or its error).
  QList<QJsonObject> about(const QString& id) const {
    QList<QJsonObject> out;
    for (const QJsonObject& m : messages)
      if (m.value("id").toString() == id) out << m;
    return out;
  }
  // Request `id` has ended ({"id", "done": true}).
  bool done(const QString& id) const {
    for (const QJsonObject& m : messages)
      if (m.value("id").toString() == id && m.value("done").toBool()) return true;
    return false;
  }
  // The error type of the last refusal about `id`, or "".
  QString refusal(const QString& id) const {
    QString type;
    for (const QJsonObject& m : messages)
      if (m.value("id").toString() == id && m.contains("error")) type = m.value("error").toObject().value("type").toString();
    return type;
  }
  QWebSocket ws;
  QList<QJsonObject> messages;
  bool closed = false;
};

// The first line of the server's answer to a hand-written WebSocket handshake (the socket stays open after a 101),
// and the whole head in *head.
QByteArray handshake(quint16 port, const QByteArray& target, const QByteArray& headers, QByteArray* head = nullptr) {
  QTcpSocket raw;
  raw.connectToHost(QHostAddress::LocalHost, port);
  if (!raw.waitForConnected(5000)) return {};
  raw.write("GET " + target + " HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" + headers + "\r\n");
  QByteArray answer;
  QElapsedTimer t;
  t.start();
  while (!answer.contains("\r\n\r\n") && t.elapsed() < 5000 && raw.state() == QAbstractSocket::ConnectedState) {
    QTest::qWait(5);  // the server runs on this thread's event loop
    answer += raw.readAll();
  }
  if (head) *head = answer.left(answer.indexOf("\r\n\r\n"));
  return answer.left(answer.indexOf("\r\n"));
}
using Events = StreamEvents;
Events parseEvents(const QByteArray& body, bool chat) { return parseStreamEvents(body, chat); }

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
    return apiCall(m_net, s.port(), method, path, body, key);
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
  QByteArray rawExchange(ApiServer& s, const QByteArray& bytes) { return rawHttpExchange(s.port(), bytes); }

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

  // The WebSocket endpoint, /v1/ws: two requests in flight on one socket (a completion and a chat, tagged by the
  // client's ids) and one without an id; each one's chunks are the SSE chunks and add up to the HTTP answer's text.
  void websocket_streams_the_same_chunks_as_sse() {
    auto s = start();
    const QJsonObject completion{{"prompt", "abc def"}, {"max_tokens", 12}, {"temperature", 0}};
    const QJsonObject chat{{"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "hi there"}}}},
                           {"max_tokens", 10}, {"temperature", 0}, {"n", 2}};
    const auto compact = [](const QJsonObject& o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); };
    const Reply plain = call(*s, "POST", "/v1/completions", compact(completion));
    QCOMPARE(plain.status, 200);
    const QString want = plain.json().value("choices").toArray().at(0).toObject().value("text").toString();
    QVERIFY(!want.isEmpty());
    const Reply plainChat = call(*s, "POST", "/v1/chat/completions", compact(chat));
    QCOMPARE(plainChat.status, 200);
    const QString wantChat =
        plainChat.json().value("choices").toArray().at(0).toObject().value("message").toObject().value("content").toString();
    QJsonObject streamed = completion;
    streamed.insert("stream", true);
    const Reply sse = call(*s, "POST", "/v1/completions", compact(streamed));
    QCOMPARE(parseEvents(sse.body, false).text.value(0), want);
    QJsonObject firstSse;
    for (const QByteArray& line : sse.body.split('\n'))
      if (line.startsWith("data: {")) {
        firstSse = QJsonDocument::fromJson(line.mid(6)).object();
        break;
      }

    WsClient c;
    QVERIFY(c.open(s->port()));
    c.send({{"endpoint", "/v1/completions"}, {"id", "a"}, {"body", completion}});
    c.send({{"endpoint", "/v1/chat/completions"}, {"id", "b"}, {"body", chat}});
    c.send({{"endpoint", "/v1/completions"}, {"body", completion}});
    QTRY_VERIFY_WITH_TIMEOUT(c.done("a") && c.done("b"), 20000);
    Events a, b;
    for (const QJsonObject& m : c.about("a"))
      if (!m.contains("done")) addStreamChunk(a, m, false);
    for (const QJsonObject& m : c.about("b"))
      if (!m.contains("done")) addStreamChunk(b, m, true);
    QCOMPARE(a.text.value(0), want);
    QCOMPARE(a.finish.value(0), QStringLiteral("length"));
    QCOMPARE(b.text.value(0), wantChat);
    QCOMPARE(b.text.value(1), wantChat);  // n = 2, greedy: the same twice
    QCOMPARE(c.about("a").last(), (QJsonObject{{"id", "a"}, {"done", true}}));
    QCOMPARE(c.about("b").last(), (QJsonObject{{"id", "b"}, {"done", true}}));
    // A chunk is the SSE chunk: the same fields, the same object type; only its id is the client's.
    const QJsonObject firstWs = c.about("a").first();
    QCOMPARE(firstWs.keys(), firstSse.keys());
    QCOMPARE(firstWs.value("object"), firstSse.value("object"));
    QCOMPARE(firstWs.value("choices"), firstSse.value("choices"));
    // Without an id, the server's completion id tags the chunks and the end.
    QTRY_VERIFY_WITH_TIMEOUT(c.messages.last().value("done").toBool() &&
                                 c.messages.last().value("id").toString() != QLatin1String("a") &&
                                 c.messages.last().value("id").toString() != QLatin1String("b"),
                             20000);
    const QString serverId = c.messages.last().value("id").toString();
    QVERIFY(serverId.startsWith(QStringLiteral("cmpl-")));
    Events unnamed;
    for (const QJsonObject& m : c.about(serverId))
      if (!m.contains("done")) addStreamChunk(unnamed, m, false);
    QCOMPARE(unnamed.text.value(0), want);
    QCOMPARE(s->openWebSockets(), 1);
    c.ws.close();
    QTRY_COMPARE_WITH_TIMEOUT(s->openWebSockets(), 0, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(s->openConnections(), 0, 5000);
  }

  void websocket_upgrade_checks_key_host_and_origin() {
    auto s = start();
    const QByteArray port = QByteArray::number(s->port());
    const QByteArray host = "Host: 127.0.0.1:" + port + "\r\n";
    QByteArray head;
    QCOMPARE(handshake(s->port(), "/v1/ws", host + "Authorization: Bearer sk-1\r\n", &head),
             QByteArray("HTTP/1.1 101 Switching Protocols"));
    QVERIFY2(head.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), head.constData());  // RFC 6455's sample accept value
    QCOMPARE(handshake(s->port(), "/v1/ws", host).left(12), QByteArray("HTTP/1.1 401"));
    QCOMPARE(handshake(s->port(), "/v1/ws", host + "Authorization: Bearer sk-2\r\n").left(12), QByteArray("HTTP/1.1 401"));
    QCOMPARE(handshake(s->port(), "/v1/ws?api_key=sk-1", host).left(12), QByteArray("HTTP/1.1 101"));
    QCOMPARE(handshake(s->port(), "/v1/ws?api_key=nope", host).left(12), QByteArray("HTTP/1.1 401"));
    QCOMPARE(handshake(s->port(), "/v1/ws", "Host: attacker.example:" + port + "\r\nAuthorization: Bearer sk-1\r\n").left(12),
             QByteArray("HTTP/1.1 403"));
    // Browsers' pages: only this server's own origin (or a configured one) may connect.
    const QByteArray keyed = host + "Authorization: Bearer sk-1\r\n";
    QCOMPARE(handshake(s->port(), "/v1/ws", keyed + "Origin: https://attacker.example\r\n").left(12), QByteArray("HTTP/1.1 403"));
    QCOMPARE(handshake(s->port(), "/v1/ws", keyed + "Origin: http://localhost:1\r\n").left(12), QByteArray("HTTP/1.1 403"));
    QCOMPARE(handshake(s->port(), "/v1/ws", keyed + "Origin: null\r\n").left(12), QByteArray("HTTP/1.1 403"));
    QCOMPARE(handshake(s->port(), "/v1/ws", keyed + "Origin: http://localhost:" + port + "\r\n").left(12),
             QByteArray("HTTP/1.1 101"));
    // Not a handshake: told to upgrade.
    QVERIFY(rawExchange(*s, "GET /v1/ws HTTP/1.1\r\n" + keyed + "\r\n").startsWith("HTTP/1.1 426"));
    QVERIFY(rawExchange(*s, "GET /v1/ws HTTP/1.1\r\n" + keyed + "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
                .startsWith("HTTP/1.1 400"));  // no Sec-WebSocket-Key
    QVERIFY(rawExchange(*s, "POST /v1/ws HTTP/1.1\r\n" + keyed + "Content-Length: 2\r\n\r\n{}").startsWith("HTTP/1.1 405"));
    QVERIFY(rawExchange(*s, "GET /v1/ws HTTP/1.1\r\n" + keyed + "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nContent-Length: 2\r\n\r\n{}")
                .startsWith("HTTP/1.1 400"));  // a handshake has no body

    ApiServer::Options o;
    o.port = 0;
    o.apiKeys = {QStringLiteral("sk-1")};
    o.allowedOrigins = {QStringLiteral("https://app.example")};
    ApiServer configured(*m_model, *m_be, o);
    QString error;
    QVERIFY(configured.listen(&error));
    const QByteArray host2 = "Host: 127.0.0.1:" + QByteArray::number(configured.port()) + "\r\nAuthorization: Bearer sk-1\r\n";
    QCOMPARE(handshake(configured.port(), "/v1/ws", host2 + "Origin: https://app.example\r\n").left(12), QByteArray("HTTP/1.1 101"));
    QCOMPARE(handshake(configured.port(), "/v1/ws", host2 + "Origin: https://other.example\r\n").left(12), QByteArray("HTTP/1.1 403"));

    // A QWebSocket with a wrong key never opens.
    WsClient wrong;
    QVERIFY(!wrong.open(s->port(), "sk-wrong"));
    WsClient browser(QStringLiteral("https://attacker.example"));
    QVERIFY(!browser.open(s->port()));
  }

  void websocket_bad_messages_get_errors_and_the_socket_stays_usable() {
    auto s = start();
    WsClient c;
    QVERIFY(c.open(s->port()));
    const auto errorOf = [&](const QString& text) {
      const qsizetype before = c.messages.size();
      c.ws.sendTextMessage(text);
      if (!QTest::qWaitFor([&] { return c.messages.size() > before; }, 5000)) return QJsonObject();
      return c.messages.last();
    };
    const QJsonObject notJson = errorOf(QStringLiteral("{not json"));
    QVERIFY(notJson.value("error").toObject().value("message").toString().contains("JSON"));
    QVERIFY(notJson.contains("id") && notJson.value("id").isNull());
    QVERIFY(errorOf(QStringLiteral("[1,2]")).contains("error"));
    QCOMPARE(errorOf(R"({"endpoint":"/v1/models","id":"x","body":{}})").value("error").toObject().value("param").toString(),
             QStringLiteral("endpoint"));
    QCOMPARE(errorOf(R"({"endpoint":"/v1/completions","id":"x"})").value("error").toObject().value("param").toString(),
             QStringLiteral("body"));
    QCOMPARE(errorOf(R"({"endpoint":"/v1/completions","id":7,"body":{}})").value("error").toObject().value("param").toString(),
             QStringLiteral("id"));
    const QJsonObject badParam = errorOf(R"({"endpoint":"/v1/completions","id":"t","body":{"prompt":"x","temperature":"hot"}})");
    QCOMPARE(badParam.value("id").toString(), QStringLiteral("t"));
    QCOMPARE(badParam.value("error").toObject().value("param").toString(), QStringLiteral("temperature"));
    QCOMPARE(errorOf(R"({"cancel":"nothing"})").value("error").toObject().value("param").toString(), QStringLiteral("cancel"));
    c.ws.sendBinaryMessage("\x01\x02");
    QTRY_VERIFY_WITH_TIMEOUT(c.messages.last().value("error").toObject().value("message").toString().contains("text"), 5000);
    // Still open and serving.
    QCOMPARE(c.ws.state(), QAbstractSocket::ConnectedState);
    c.send({{"endpoint", "/v1/completions"}, {"id", "ok"}, {"body", QJsonObject{{"prompt", "abc"}, {"max_tokens", 3}}}});
    QTRY_VERIFY_WITH_TIMEOUT(c.done("ok"), 10000);
    QVERIFY(c.about("ok").last().value("done").toBool());
    QCOMPARE(s->counters().running, 0);
  }

  void websocket_close_cancels_and_limits_hold() {
    auto s = start(1, 0, {QStringLiteral("sk-1")}, m_longModel.get());
    const QJsonObject longBody{{"prompt", "abc"}, {"max_tokens", 4000}};
    WsClient c;
    QVERIFY(c.open(s->port()));
    // {"cancel": id} ends one request early, with its finish chunk and its end.
    c.send({{"endpoint", "/v1/completions"}, {"id", "one"}, {"body", longBody}});
    QTRY_VERIFY_WITH_TIMEOUT(!c.about("one").isEmpty(), 10000);
    QCOMPARE(s->counters().running, 1);
    // The same id twice, and more in flight than the server allows (webSocketMaxInFlight is 8, but the queue is 0:
    // the scheduler's own bound answers first, as busy).
    c.send({{"endpoint", "/v1/completions"}, {"id", "one"}, {"body", longBody}});
    QTRY_COMPARE_WITH_TIMEOUT(c.refusal("one"), QStringLiteral("invalid_request_error"), 5000);
    c.send({{"endpoint", "/v1/completions"}, {"id", "two"}, {"body", longBody}});
    QTRY_COMPARE_WITH_TIMEOUT(c.refusal("two"), QStringLiteral("server_busy"), 5000);
    c.send({{"cancel", "one"}});
    QTRY_VERIFY_WITH_TIMEOUT(c.done("one"), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(s->counters().running, 0, 10000);
    QVERIFY(c.about("one").size() >= 3);
    QVERIFY(c.about("one").last().value("done").toBool());
    QCOMPARE(c.about("one").at(c.about("one").size() - 2).value("choices").toArray().at(0).toObject().value("finish_reason").toString(),
             QStringLiteral("stop"));

    // Closing the socket mid-stream cancels its request: the slot frees, /health says so.
    c.send({{"endpoint", "/v1/completions"}, {"id", "three"}, {"body", longBody}});
    QTRY_VERIFY_WITH_TIMEOUT(!c.about("three").isEmpty(), 10000);
    QCOMPARE(call(*s, "GET", "/health", {}, {}).json().value("running").toInt(), 1);
    const qint64 before = s->counters().generated_tokens;
    c.ws.abort();
    QTRY_COMPARE_WITH_TIMEOUT(s->counters().running, 0, 10000);
    QVERIFY(s->counters().generated_tokens - before < 4000);
    QCOMPARE(call(*s, "GET", "/health", {}, {}).json().value("running").toInt(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(s->openWebSockets(), 0, 5000);
    QCOMPARE(call(*s, "POST", "/v1/completions", R"({"prompt":"x","max_tokens":2})").status, 200);

    // A message larger than the limit closes the socket with 1009 (message too big).
    WsClient big;
    QVERIFY(big.open(s->port()));
    big.ws.sendTextMessage(QString(9 * 1024 * 1024, QLatin1Char('x')));
    QTRY_COMPARE_WITH_TIMEOUT(big.ws.state(), QAbstractSocket::UnconnectedState, 10000);
    QCOMPARE(big.ws.closeCode(), QWebSocketProtocol::CloseCodeTooMuchData);
    QCOMPARE(call(*s, "GET", "/health", {}, {}).status, 200);
  }

  void websocket_in_flight_limit() {
    ApiServer::Options o;
    o.port = 0;
    o.modelName = QStringLiteral("tiny");
    o.batch.parallel = 1;
    o.batch.max_queue = 8;
    o.webSocketMaxInFlight = 2;
    ApiServer s(*m_longModel, *m_be, o);
    QString error;
    QVERIFY(s.listen(&error));
    WsClient c;
    QVERIFY(c.open(s.port(), {}));  // no keys configured: none needed
    const QJsonObject longBody{{"prompt", "abc"}, {"max_tokens", 4000}};
    for (const char* id : {"a", "b", "c"}) c.send({{"endpoint", "/v1/completions"}, {"id", id}, {"body", longBody}});
    QTRY_COMPARE_WITH_TIMEOUT(c.refusal("c"), QStringLiteral("rate_limit_error"), 5000);
    QCOMPARE(s.counters().running + s.counters().queued, 2);
    c.ws.close();
    QTRY_COMPARE_WITH_TIMEOUT(s.counters().running + s.counters().queued, 0, 10000);
  }
};

QTEST_GUILESS_MAIN(TestApiServer)
#include "test_api_server.moc"
