// Tests for engine/src/io/json_util: the checked JSON parser every engine reader builds on, and
// the typed getters HF config.json readers use (reliability.md §1.7 case 24: wrong types, ranges,
// 2^31 values, nesting depth 100k, duplicate keys, NaN literals).
// Every rejection must be an engine::Error whose message names the label and the place; nothing
// may crash or recurse deeply.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <string>

#include "engine/error.h"
#include "io/json_util.h"
#include "support/error_of.h"

using engine::io::json;

namespace {

json parse(const std::string& s) { return engine::io::parse_json_checked(s, "config.json"); }

}  // namespace

class TestJsonUtil : public QObject {
  Q_OBJECT

 private slots:
  void parses_valid_json() {
    // (moc of Qt 6.4 loses track of a raw string that spans lines: keep each on one line.)
    const json j = parse(R"({"n_embd": 768, "eps": 1e-05, "name": "gpt2", "tied": true, )"
                         R"("arch": ["GPT2LMHeadModel"], "none": null, "nested": {"a": [1, [2, {"b": 3}]]}})");
    QCOMPARE(j["n_embd"].get<int>(), 768);
    QCOMPARE(j["nested"]["a"][1][1]["b"].get<int>(), 3);
    QCOMPARE(j["arch"][0].get<std::string>(), std::string("GPT2LMHeadModel"));
    // Leading/trailing whitespace and a UTF-8 BOM-free multi-byte string are fine.
    QCOMPARE(parse("  \n{\"k\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}\n\t ")["k"].get<std::string>(),
             std::string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
    QVERIFY(parse("[]").is_array());
    QVERIFY(parse("5").is_number_integer());
    // Same key in different objects is not a duplicate.
    QVERIFY(parse(R"({"a": {"k": 1}, "b": {"k": 2}, "k": 3})").is_object());
  }

  void rejects_bad_json_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("empty") << QByteArray("") << "config.json: invalid JSON";
    QTest::newRow("only spaces") << QByteArray("   ") << "config.json: invalid JSON";
    QTest::newRow("duplicate top-level key")
        << QByteArray(R"({"a": 1, "b": 2, "a": 3})") << "config.json: invalid JSON: duplicate key 'a' at the top level";
    QTest::newRow("duplicate nested key")
        << QByteArray(R"({"x": {"y": [5, {"k": 1, "k": 2}]}})") << "duplicate key 'k' in object at /x/y/1";
    QTest::newRow("duplicate key, different value types") << QByteArray(R"({"n": 1, "n": "1"})") << "duplicate key 'n'";
    QTest::newRow("NaN literal") << QByteArray(R"({"a": NaN})") << "invalid JSON at byte 6";
    QTest::newRow("Infinity literal") << QByteArray(R"({"a": Infinity})") << "invalid JSON";
    QTest::newRow("-Infinity literal") << QByteArray(R"({"a": -Infinity})") << "invalid JSON";
    QTest::newRow("nan lowercase") << QByteArray("[nan]") << "invalid JSON";
    QTest::newRow("number overflow 1e400") << QByteArray("[1e400]") << "number overflow";
    QTest::newRow("number overflow -1e400") << QByteArray("[-1e400]") << "number overflow";
    QTest::newRow("trailing garbage") << QByteArray(R"({"a": 1} x)") << "invalid JSON";
    QTest::newRow("two values") << QByteArray("{} {}") << "invalid JSON";
    QTest::newRow("trailing comma") << QByteArray(R"({"a": 1,})") << "invalid JSON";
    QTest::newRow("comment") << QByteArray("{\"a\": 1 /* c */}") << "invalid JSON";
    QTest::newRow("single quotes") << QByteArray("{'a': 1}") << "invalid JSON";
    QTest::newRow("unterminated string") << QByteArray("{\"a\": \"abc") << "invalid JSON";
    QTest::newRow("unterminated object") << QByteArray(R"({"a": 1)") << "invalid JSON";
    QTest::newRow("control char in string") << QByteArray("[\"a\x01\"]") << "invalid JSON";
    QTest::newRow("lone high surrogate escape") << QByteArray(R"(["\ud800"])") << "invalid JSON";
    QTest::newRow("lone low surrogate escape") << QByteArray(R"(["\udc00x"])") << "invalid JSON";
    QTest::newRow("raw 0xff") << QByteArray("{\"a\": \"\xff\"}") << "config.json: invalid UTF-8 at byte 7";
    QTest::newRow("overlong slash") << QByteArray("[\"\xc0\xaf\"]") << "invalid UTF-8 at byte 2";
    QTest::newRow("utf-8 encoded surrogate") << QByteArray("[\"\xed\xa0\x80\"]") << "invalid UTF-8 at byte 2";
    QTest::newRow("truncated sequence") << QByteArray("[\"\xe2\x82\"]") << "invalid UTF-8 at byte 2";
    QTest::newRow("above U+10FFFF") << QByteArray("[\"\xf4\x90\x80\x80\"]") << "invalid UTF-8 at byte 2";
    QTest::newRow("bad byte outside string") << QByteArray("[1, \x80]") << "invalid UTF-8 at byte 4";
    QTest::newRow("raw NUL ends nothing")
        << QByteArray("{}\0garbage", 10) << "invalid JSON at byte 2 (line 1, column 3): raw NUL byte";
    QTest::newRow("raw NUL in string") << QByteArray("[\"a\0b\"]", 7) << "raw NUL byte";
    QTest::newRow("second line position") << QByteArray("{\n  \"a\": tru\n}") << "(line 2, column";
  }
  void rejects_bad_json() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    const QString msg = error_of([&] { parse(text.toStdString()); });
    QVERIFY2(msg.contains(expected), qPrintable("got: " + msg));
  }

  void depth_limit() {
    // Exactly max_depth levels parse; one more is refused with the offset of the offending bracket.
    std::string ok(64, '[');
    ok += std::string(64, ']');
    QVERIFY(parse(ok).is_array());
    std::string deep(65, '[');
    deep += std::string(65, ']');
    const QString msg = error_of([&] { parse(deep); });
    QVERIFY2(msg.contains("config.json: JSON nesting deeper than 64 levels at byte 64"), qPrintable(msg));
    // A caller-chosen smaller limit.
    QVERIFY(!error_of([] { engine::io::parse_json_checked(R"({"a": {"b": 1}})", "x", 1); }).isEmpty());
    QVERIFY(error_of([] { engine::io::parse_json_checked(R"({"a": {"b": 1}})", "x", 2); }).isEmpty());
  }

  void depth_100k_does_not_overflow_the_stack() {
    const size_t n = 100000;
    std::string arrays(n, '[');
    arrays += std::string(n, ']');
    QVERIFY(error_of([&] { parse(arrays); }).contains("nesting deeper than 64"));

    std::string objects;
    for (size_t i = 0; i < n; ++i) objects += "{\"a\":";
    objects += "1";
    objects += std::string(n, '}');
    QVERIFY(error_of([&] { parse(objects); }).contains("nesting deeper than 64"));

    // Unbalanced and unterminated: still a clean error.
    QVERIFY(error_of([&] { parse(std::string(n, '[')); }).contains("nesting deeper than 64"));
    // Brackets inside a string are text, not nesting.
    std::string in_string = "[\"" + std::string(n, '[') + "\\\"" + std::string(n, '{') + "\"]";
    QVERIFY(parse(in_string).is_array());
  }

  void int_getter_data() {
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<qint64>("expected");
    QTest::newRow("in range") << QByteArray("768") << true << qint64(768);
    QTest::newRow("min") << QByteArray("1") << true << qint64(1);
    QTest::newRow("max") << QByteArray("65536") << true << qint64(65536);
    QTest::newRow("zero") << QByteArray("0") << false << qint64(0);
    QTest::newRow("negative") << QByteArray("-768") << false << qint64(0);
    QTest::newRow("above max") << QByteArray("65537") << false << qint64(0);
    QTest::newRow("2^31") << QByteArray("2147483648") << false << qint64(0);
    QTest::newRow("2^63") << QByteArray("9223372036854775808") << false << qint64(0);
    QTest::newRow("2^64-1") << QByteArray("18446744073709551615") << false << qint64(0);
    QTest::newRow("2^64 (parsed as float)") << QByteArray("18446744073709551616") << false << qint64(0);
    QTest::newRow("float with fraction") << QByteArray("768.5") << false << qint64(0);
    QTest::newRow("integral float") << QByteArray("768.0") << false << qint64(0);
    QTest::newRow("exponent") << QByteArray("7.68e2") << false << qint64(0);
    QTest::newRow("string") << QByteArray("\"768\"") << false << qint64(0);
    QTest::newRow("bool") << QByteArray("true") << false << qint64(0);
    QTest::newRow("null") << QByteArray("null") << false << qint64(0);
    QTest::newRow("array") << QByteArray("[768]") << false << qint64(0);
    QTest::newRow("object") << QByteArray("{\"v\": 768}") << false << qint64(0);
  }
  void int_getter() {
    QFETCH(QByteArray, value);
    QFETCH(bool, ok);
    QFETCH(qint64, expected);
    const json obj = parse("{\"n_embd\": " + value.toStdString() + "}");
    int64_t got = 0;
    const QString msg = error_of([&] { got = engine::io::json_get_int(obj, "n_embd", "config.json", 1, 65536); });
    if (ok) {
      QVERIFY2(msg.isEmpty(), qPrintable(msg));
      QCOMPARE(got, expected);
    } else {
      QVERIFY2(msg.startsWith("config.json: field 'n_embd' must be an integer in [1, 65536], got "), qPrintable(msg));
    }
  }

  void error_message_format() {
    const json obj = parse(R"({"n_embd": "abc", "n_layer": 2147483648, "eps": "1e-5", "name": 5, )"
                           R"("tied": 1, "list": {}, "cfg": [], "big": 99999999999999999999})");
    QCOMPARE(error_of([&] { engine::io::json_get_int(obj, "n_embd", "config.json", 1, 65536); }),
             QStringLiteral("config.json: field 'n_embd' must be an integer in [1, 65536], got \"abc\""));
    QCOMPARE(error_of([&] { engine::io::json_get_int(obj, "n_layer", "config.json", 1, 1024); }),
             QStringLiteral("config.json: field 'n_layer' must be an integer in [1, 1024], got 2147483648"));
    QCOMPARE(error_of([&] { engine::io::json_get_int(obj, "n_head", "config.json", 1, 1024); }),
             QStringLiteral("config.json: missing required field 'n_head'"));
    QCOMPARE(error_of([&] { engine::io::json_get_number(obj, "eps", "config.json", 0, 1); }),
             QStringLiteral("config.json: field 'eps' must be a number in [0, 1], got \"1e-5\""));
    QCOMPARE(error_of([&] { engine::io::json_get_string(obj, "name", "config.json"); }),
             QStringLiteral("config.json: field 'name' must be a string, got 5"));
    QCOMPARE(error_of([&] { engine::io::json_get_bool(obj, "tied", "config.json"); }),
             QStringLiteral("config.json: field 'tied' must be true or false, got 1"));
    QCOMPARE(error_of([&] { engine::io::json_get_array(obj, "list", "config.json"); }),
             QStringLiteral("config.json: field 'list' must be an array, got an object with 0 keys"));
    QCOMPARE(error_of([&] { engine::io::json_get_object(obj, "cfg", "config.json"); }),
             QStringLiteral("config.json: field 'cfg' must be an object, got an array of 0 elements"));
    QVERIFY(error_of([&] {
              engine::io::json_get_uint(obj, "big", "config.json", 0, UINT64_MAX);
            }).startsWith("config.json: field 'big' must be an integer"));
    // Looking a field up in something that is not an object.
    QCOMPARE(error_of([&] { engine::io::json_get_int(obj["cfg"], "x", "config.json", 0, 1); }),
             QStringLiteral("config.json: expected an object holding field 'x', got an array of 0 elements"));
  }

  void optional_getters() {
    const json obj = parse(R"({"window": null, "theta": 10000.0, "kv": 4, "bad": "x", "flag": false, "s": "v"})");
    QVERIFY(!engine::io::json_get_int_opt(obj, "absent", "c", 0, 10).has_value());
    QVERIFY(!engine::io::json_get_int_opt(obj, "window", "c", 0, 10).has_value());  // null == not set
    QCOMPARE(*engine::io::json_get_int_opt(obj, "kv", "c", 1, 64), int64_t{4});
    QCOMPARE(*engine::io::json_get_number_opt(obj, "theta", "c", 1, 1e9), 10000.0);
    QCOMPARE(*engine::io::json_get_number_opt(obj, "kv", "c", 1, 1e9), 4.0);  // integers are numbers too
    QCOMPARE(*engine::io::json_get_bool_opt(obj, "flag", "c"), false);
    QCOMPARE(*engine::io::json_get_string_opt(obj, "s", "c"), std::string("v"));
    QVERIFY(!engine::io::json_get_string_opt(obj, "absent", "c").has_value());
    QVERIFY(engine::io::json_get_object_opt(obj, "window", "c") == nullptr);
    QVERIFY(engine::io::json_get_array_opt(obj, "absent", "c") == nullptr);
    // Present but wrong: an error, never silently "absent".
    QVERIFY(error_of([&] {
              engine::io::json_get_int_opt(obj, "bad", "c", 0, 10);
            }).startsWith("c: field 'bad' must be an integer in [0, 10], got \"x\""));
    QVERIFY(!error_of([&] { engine::io::json_get_int_opt(obj, "kv", "c", 5, 10); }).isEmpty());
    QVERIFY(!error_of([&] { engine::io::json_get_bool_opt(obj, "kv", "c"); }).isEmpty());
    QVERIFY(!error_of([&] { engine::io::json_get_object_opt(obj, "kv", "c"); }).isEmpty());
    // json_find distinguishes null from absent.
    QVERIFY(engine::io::json_find(obj, "window", "c") != nullptr);
    QVERIFY(engine::io::json_find(obj, "absent", "c") == nullptr);
  }

  void number_and_string_ranges() {
    const json obj = parse(R"({"eps": 1e-05, "neg": -2.5, "s": "abcdef", "i": -3})");
    QCOMPARE(engine::io::json_get_number(obj, "eps", "c", 0, 1), 1e-05);
    QVERIFY(!error_of([&] { engine::io::json_get_number(obj, "neg", "c", 0, 1); }).isEmpty());
    QCOMPARE(engine::io::json_get_string(obj, "s", "c", 6), std::string("abcdef"));
    QCOMPARE(error_of([&] { engine::io::json_get_string(obj, "s", "c", 5); }),
             QStringLiteral("c: field 's' must be a string of at most 5 bytes, got 6 bytes"));
    QCOMPARE(engine::io::json_get_int(obj, "i", "c", -5, 5), int64_t{-3});
    QVERIFY(!error_of([&] { engine::io::json_get_uint(obj, "i", "c", 0, 5); }).isEmpty());
    QCOMPARE(engine::io::json_as_uint(json(18446744073709551615ull), "c", "v", 0, UINT64_MAX), UINT64_MAX);
  }

  void describe_truncates() {
    const std::string long_text(500, 'x');
    const std::string d = engine::io::json_describe(json(long_text));
    QVERIFY(d.size() < 100);
    QVERIFY(d.find("(500 bytes)") != std::string::npos);
    // Cutting a long multi-byte string never splits a character (the result stays valid UTF-8).
    std::string euros;
    for (int i = 0; i < 100; ++i) euros += "\xe2\x82\xac";
    QVERIFY(!engine::io::find_invalid_utf8(engine::io::json_describe(json(euros))).has_value());
    QCOMPARE(engine::io::json_describe(json(nullptr)), std::string("null"));
  }

  void utf8_validator_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("bad_at");  // -1 = valid
    QTest::newRow("ascii") << QByteArray("hello") << -1;
    QTest::newRow("2-byte") << QByteArray("\xc3\xa9") << -1;
    QTest::newRow("3-byte") << QByteArray("\xe2\x82\xac") << -1;
    QTest::newRow("4-byte") << QByteArray("\xf0\x9f\x98\x80") << -1;
    QTest::newRow("U+10FFFF") << QByteArray("\xf4\x8f\xbf\xbf") << -1;
    QTest::newRow("U+D7FF") << QByteArray("\xed\x9f\xbf") << -1;
    QTest::newRow("U+E000") << QByteArray("\xee\x80\x80") << -1;
    QTest::newRow("NUL is valid") << QByteArray("a\0b", 3) << -1;
    QTest::newRow("lone continuation") << QByteArray("ab\x80") << 2;
    QTest::newRow("C0 overlong") << QByteArray("\xc0\x80") << 0;
    QTest::newRow("C1 overlong") << QByteArray("\xc1\xbf") << 0;
    QTest::newRow("E0 overlong") << QByteArray("x\xe0\x80\x80") << 1;
    QTest::newRow("F0 overlong") << QByteArray("\xf0\x80\x80\x80") << 0;
    QTest::newRow("surrogate D800") << QByteArray("\xed\xa0\x80") << 0;
    QTest::newRow("above U+10FFFF") << QByteArray("\xf4\x90\x80\x80") << 0;
    QTest::newRow("F5") << QByteArray("\xf5\x80\x80\x80") << 0;
    QTest::newRow("FF") << QByteArray("\xff") << 0;
    QTest::newRow("truncated at end") << QByteArray("ok\xf0\x9f\x98") << 2;
    QTest::newRow("bad continuation") << QByteArray("\xe2\x28\xa1") << 0;
  }
  void utf8_validator() {
    QFETCH(QByteArray, bytes);
    QFETCH(int, bad_at);
    const auto r = engine::io::find_invalid_utf8(std::string_view(bytes.constData(), bytes.size()));
    if (bad_at < 0) QVERIFY(!r.has_value());
    else QCOMPARE(r.value_or(9999), size_t(bad_at));
  }

  void base_offset_shifts_positions() {
    const QString msg = error_of([] { engine::io::parse_json_checked("{\"a\": \xff}", "m.safetensors header", 8, 8); });
    QVERIFY2(msg.contains("m.safetensors header: invalid UTF-8 at byte 14"), qPrintable(msg));
  }

  void parse_file() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("config.json").toStdString();
    {
      std::ofstream f(path, std::ios::binary);
      f << R"({"n_embd": 64, "n_embd": 65})";
    }
    QVERIFY(error_of([&] {
              engine::io::parse_json_file(path);
            }).contains(QString::fromStdString(path) + ": invalid JSON: duplicate key 'n_embd'"));
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << R"({"n_embd": 64})";
    }
    QCOMPARE(engine::io::json_get_int(engine::io::parse_json_file(path), "n_embd", path, 1, 100), int64_t{64});
    // Size cap is applied before parsing.
    QVERIFY(error_of([&] { engine::io::parse_json_file(path, 4); }).contains("more than the 4-byte limit"));
    const std::string missing = dir.filePath("nope.json").toStdString();
    QVERIFY(error_of([&] {
              engine::io::parse_json_file(missing);
            }).contains(QString::fromStdString(missing) + ": cannot open: No such file or directory"));
    // An empty file is not JSON.
    const std::string empty = dir.filePath("empty.json").toStdString();
    { std::ofstream f(empty, std::ios::binary); }
    QVERIFY(error_of([&] { engine::io::parse_json_file(empty); }).contains("invalid JSON"));
  }
};

QTEST_APPLESS_MAIN(TestJsonUtil)
#include "test_json_util.moc"
