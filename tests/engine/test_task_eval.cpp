// Task evaluations (engine/eval/task_eval.h):
//   - each scoring rule on hand-written replies, the failures included;
//   - items from JSONL (every task's format, a bad line named by its number) and generated in memory;
//   - the counting with an oracle in place of the model: a perfect one scores 1, a wrong one 0, and
//     the categories add up to n;
//   - the JSON schema;
//   - the greedy replier on a tiny model: deterministic, and stopped by its poll.
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>

#include "engine/error.h"
#include "engine/eval/task_eval.h"
#include "engine/model_loader.h"
#include "support/tiny_text_model.h"

using engine::EvalTask;
using nlohmann::json;

namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const engine::Error& e) {
    return e.what();
  }
  return {};
}

// Answers every item of `items` as `answer(item)` says, stopping as `stopped` says.
engine::ReplyFunction oracle(const std::vector<engine::EvalItem>& items,
                             const std::function<std::string(const engine::EvalItem&)>& answer, bool stopped) {
  std::map<std::string, std::string> replies;
  for (const engine::EvalItem& item : items) replies[item.prompt] = answer(item);
  return [replies, stopped](const std::string& prompt) {
    const auto it = replies.find(prompt);
    return engine::ModelReply{it == replies.end() ? std::string("?") : it->second, stopped};
  };
}

// Every category's n adds up to the items it covers: arith items are in one category, facts items in
// two (seen/unseen and a relation), chat items in both "stops" and "in_template".
void verifyCategoriesAddUp(const engine::TaskEvalResult& r, const std::vector<std::string>& groupPrefixes) {
  for (const std::string& prefix : groupPrefixes) {
    int n = 0, correct = 0;
    for (const auto& [name, c] : r.categories)
      if (name.rfind(prefix, 0) == 0 || (prefix == "seen|unseen" && (name == "seen" || name == "unseen"))) {
        n += c.n;
        correct += c.correct;
      }
    QCOMPARE(n, r.total.n);
    QCOMPARE(correct, r.total.correct);
  }
}

}  // namespace

class TestTaskEval : public QObject {
  Q_OBJECT

 private slots:
  void task_names_round_trip() {
    for (EvalTask t : {EvalTask::Arith, EvalTask::Facts, EvalTask::Chat})
      QCOMPARE(engine::eval_task_from_name(engine::eval_task_name(t)), std::optional<EvalTask>(t));
    QVERIFY(!engine::eval_task_from_name("perplexity"));
  }

  void last_integer_takes_the_last_number_and_its_sign() {
    QCOMPARE(engine::last_integer("43 + 80 = 123."), std::optional<std::string>("123"));
    QCOMPARE(engine::last_integer("123"), std::optional<std::string>("123"));
    QCOMPARE(engine::last_integer("x = -7!"), std::optional<std::string>("-7"));
    QCOMPARE(engine::last_integer("-7"), std::optional<std::string>("-7"));
    QCOMPARE(engine::last_integer("9-4"), std::optional<std::string>("4"));  // a subtraction, not -4
    QCOMPARE(engine::last_integer("it is 007"), std::optional<std::string>("7"));
    QCOMPARE(engine::last_integer("-0"), std::optional<std::string>("0"));
    QVERIFY(!engine::last_integer("no number here"));
    QVERIFY(!engine::last_integer(""));
  }

  void arith_scoring() {
    QVERIFY(engine::arith_reply_correct("43 + 80 = 123.", "123"));
    QVERIFY(engine::arith_reply_correct("123", "123"));
    QVERIFY(engine::arith_reply_correct(" The answer is 123", "123"));
    QVERIFY(engine::arith_reply_correct("5 - 9 = -4.", "-4"));
    QVERIFY(!engine::arith_reply_correct("43 + 80 = 124.", "123"));
    QVERIFY(!engine::arith_reply_correct("43 + 80 = 1234.", "123"));
    QVERIFY(!engine::arith_reply_correct("123 is not it, 5", "123"));  // the last integer counts
    QVERIFY(!engine::arith_reply_correct("", "123"));
    QVERIFY(!engine::arith_reply_correct("I do not know.", "123"));
    // What follows an end marker is another turn, not the answer.
    QVERIFY(engine::arith_reply_correct("43 + 80 = 123.<|im_end|>\n<|im_start|>user\nWhat is 1 + 1?", "123"));
    QVERIFY(engine::arith_reply_correct("123.\nUser: and 7?", "123"));
    QVERIFY(!engine::arith_reply_correct("<|im_start|>123", "123"));
  }

  void facts_scoring() {
    QVERIFY(engine::facts_reply_correct("Mia lives in the red house.", "the red house"));
    QVERIFY(engine::facts_reply_correct("THE RED HOUSE", "the red house"));
    QVERIFY(engine::facts_reply_correct("Ravi's bell is red", "red"));
    QVERIFY(engine::facts_reply_correct("red, I think", "red"));
    QVERIFY(!engine::facts_reply_correct("Ravi's bell is reddish.", "red"));  // whole words only
    QVERIFY(!engine::facts_reply_correct("Ravi's bell is bred.", "red"));
    QVERIFY(!engine::facts_reply_correct("Mia lives in the blue house.", "the red house"));
    QVERIFY(!engine::facts_reply_correct("I do not know.", "red"));
    QVERIFY(!engine::facts_reply_correct("anything", ""));
    QVERIFY(!engine::facts_reply_correct("blue<|im_end|>red", "red"));
  }

  void chat_check_needs_a_stop_the_template_and_text() {
    QVERIFY(engine::check_chat_reply("Hello! How can I help?", true).correct());
    const engine::ChatReplyCheck atMaxTokens = engine::check_chat_reply("Hello there and on and on", false);
    QVERIFY(!atMaxTokens.stops && atMaxTokens.in_template && !atMaxTokens.correct());
    for (const char* leaked : {"Hi<|im_start|>user", "Hi\nuser: more", "Sure. User: and you?", "ok assistant: yes",
                               "[INST] again", "<|eot_id|>"}) {
      const engine::ChatReplyCheck c = engine::check_chat_reply(leaked, true);
      QVERIFY2(c.stops && !c.in_template && !c.correct(), leaked);
    }
    const engine::ChatReplyCheck empty = engine::check_chat_reply(" \n", true);
    QVERIFY(empty.stops && empty.in_template && !empty.non_empty && !empty.correct());
  }

  void items_from_each_format() {
    const auto arith = engine::parse_eval_items(
        EvalTask::Arith,
        "{\"question\":\"What is 24 + 5?\",\"answer\":\"29\",\"op\":\"+\",\"digits\":2}\n\n"
        "{\"question\":\"What is 5 * 5?\",\"answer\":\"25\",\"op\":\"*\",\"digits\":1}\r\n"
        "{\"question\":\"What is 600 - 1?\",\"answer\":\"599\",\"op\":\"-\",\"digits\":3}",
        "a.jsonl");
    QCOMPARE(arith.size(), size_t(3));
    QCOMPARE(arith[0].prompt, std::string("What is 24 + 5?"));
    QCOMPARE(arith[0].expected, std::string("29"));
    QCOMPARE(arith[0].categories, std::vector<std::string>({"add_2d"}));
    QCOMPARE(arith[1].categories, std::vector<std::string>({"mul_1d"}));
    QCOMPARE(arith[2].categories, std::vector<std::string>({"sub_3d"}));

    const auto facts = engine::parse_eval_items(EvalTask::Facts,
                                                "{\"question\":\"Where does Mia live?\",\"answer\":\"Mia lives in the "
                                                "red house.\",\"key\":\"the red house\",\"relation\":\"lives_in\","
                                                "\"seen\":false}\n",
                                                "f.jsonl");
    QCOMPARE(facts.size(), size_t(1));
    QCOMPARE(facts[0].expected, std::string("the red house"));
    QCOMPARE(facts[0].categories, std::vector<std::string>({"unseen", "rel_lives_in"}));

    const auto chat = engine::parse_eval_items(
        EvalTask::Chat,
        "{\"messages\":[{\"role\":\"system\",\"content\":\"Be kind.\"},{\"role\":\"user\",\"content\":\"Hi!\"},"
        "{\"role\":\"assistant\",\"content\":\"Hello!\"},{\"role\":\"user\",\"content\":\"Bye\"}]}\n",
        "c.jsonl");
    QCOMPARE(chat.size(), size_t(1));
    QCOMPARE(chat[0].prompt, std::string("Hi!"));
    QCOMPARE(chat[0].expected, std::string("Hello!"));
  }

  void bad_lines_are_named_by_number() {
    const std::string good = "{\"question\":\"What is 1 + 1?\",\"answer\":\"2\",\"op\":\"+\",\"digits\":1}\n";
    QVERIFY(errorOf([&] { engine::parse_eval_items(EvalTask::Arith, good + "\n{not json\n", "a.jsonl"); })
                .rfind("a.jsonl: line 3: bad JSON: ", 0) == 0);
    QCOMPARE(errorOf([&] { engine::parse_eval_items(EvalTask::Arith, good + "[1,2]\n", "a.jsonl"); }),
             std::string("a.jsonl: line 2: a row must be a JSON object, got an array of 2 elements"));
    QCOMPARE(errorOf([&] {
               engine::parse_eval_items(EvalTask::Arith, "{\"question\":\"q\",\"answer\":\"2\",\"op\":\"+\"}", "a.jsonl");
             }),
             std::string("a.jsonl: line 1: no \"digits\" field"));
    QCOMPARE(errorOf([&] {
               engine::parse_eval_items(EvalTask::Arith, "{\"question\":\"q\",\"answer\":\"2\",\"op\":\"/\",\"digits\":1}",
                                        "a.jsonl");
             }),
             std::string("a.jsonl: line 1: \"op\" must be \"+\", \"-\" or \"*\", not \"/\""));
    QCOMPARE(errorOf([&] {
               engine::parse_eval_items(EvalTask::Facts,
                                        "{\"question\":\"q\",\"key\":\"k\",\"relation\":\"kind\",\"seen\":\"yes\"}", "f");
             }),
             std::string("f: line 1: \"seen\" has the wrong type"));
    QCOMPARE(errorOf([&] {
               engine::parse_eval_items(EvalTask::Chat, "{\"messages\":[{\"role\":\"assistant\",\"content\":\"x\"}]}", "c");
             }),
             std::string("c: line 1: the dialogue has no user message"));
    // A facts file read as arith is caught, not scored as nonsense.
    const std::string facts = "{\"question\":\"q\",\"answer\":\"a\",\"key\":\"k\",\"relation\":\"kind\",\"seen\":true}";
    QCOMPARE(errorOf([&] { engine::parse_eval_items(EvalTask::Arith, facts, "f.jsonl"); }),
             std::string("f.jsonl: line 1: \"answer\" is not a number"));
  }

  void items_from_a_file() {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("items.jsonl")).toStdString();
    {
      std::ofstream f(path, std::ios::binary);
      f << "{\"question\":\"What is 1 + 1?\",\"answer\":\"2\",\"op\":\"+\",\"digits\":1}\n";
    }
    QCOMPARE(engine::read_eval_items(EvalTask::Arith, path).size(), size_t(1));
    QVERIFY(errorOf([&] { engine::read_eval_items(EvalTask::Arith, path + ".missing"); }).find(path) !=
            std::string::npos);
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << "\n\n";
    }
    QCOMPARE(errorOf([&] { engine::read_eval_items(EvalTask::Arith, path); }), path + ": no arith items in the file");
  }

  void generated_items_are_the_eval_split() {
    const auto arith = engine::generate_eval_items(EvalTask::Arith, 50, 3, 1);
    QCOMPARE(arith.size(), size_t(50));
    QCOMPARE(engine::generate_eval_items(EvalTask::Arith, 50, 3, 1)[17].prompt, arith[17].prompt);
    QVERIFY(engine::generate_eval_items(EvalTask::Arith, 50, 4, 1)[0].prompt != arith[0].prompt ||
            engine::generate_eval_items(EvalTask::Arith, 50, 4, 1)[1].prompt != arith[1].prompt);
    const std::set<std::string> arithCategories = {"add_1d", "add_2d", "add_3d", "sub_1d", "sub_2d",
                                                   "sub_3d", "mul_1d", "mul_2d"};
    for (const auto& item : arith) QVERIFY2(arithCategories.count(item.categories.at(0)), item.categories[0].c_str());

    const auto facts = engine::generate_eval_items(EvalTask::Facts, 200, 1, 1);
    QCOMPARE(facts.size(), size_t(200));
    int unseen = 0;
    for (const auto& item : facts) unseen += item.categories.at(0) == "unseen";
    QVERIFY2(unseen > 0 && unseen < 200, "the eval split asks seen and unseen facts");

    const auto chat = engine::generate_eval_items(EvalTask::Chat, 10, 1, 1);
    QCOMPARE(chat.size(), size_t(10));
    for (const auto& item : chat) QVERIFY(!item.prompt.empty() && !item.expected.empty());
    QVERIFY(!errorOf([] { engine::generate_eval_items(EvalTask::Arith, 0, 1, 1); }).empty());
  }

  void perfect_and_wrong_oracles() {
    struct Case {
      EvalTask task;
      std::function<std::string(const engine::EvalItem&)> right, wrong;
      std::vector<std::string> groups;
    };
    const std::vector<Case> cases = {
        {EvalTask::Arith, [](const auto& i) { return "x = " + i.expected + "."; },
         [](const auto& i) { return "x = " + i.expected + "1."; }, {"add_", "sub_", "mul_"}},
        {EvalTask::Facts, [](const auto& i) { return "It is " + i.expected + "."; },
         [](const auto&) { return std::string("I do not know."); }, {"seen|unseen", "rel_"}},
    };
    for (const Case& c : cases) {
      const auto items = engine::generate_eval_items(c.task, 60, 2, 1);
      const engine::TaskEvalResult right = engine::evaluate_task(c.task, items, oracle(items, c.right, true));
      QCOMPARE(right.total.n, 60);
      QCOMPARE(right.total.correct, 60);
      QCOMPARE(right.total.accuracy(), 1.0);
      // "add_" + "sub_" + "mul_" categories cover every item once; so do seen + unseen, and the relations.
      int groupN = 0;
      for (const auto& [name, count] : right.categories) {
        QCOMPARE(count.correct, count.n);
        if (name.rfind("add_", 0) == 0 || name.rfind("sub_", 0) == 0 || name.rfind("mul_", 0) == 0) groupN += count.n;
      }
      if (c.task == EvalTask::Arith) QCOMPARE(groupN, 60);
      verifyCategoriesAddUp(right, c.task == EvalTask::Arith ? std::vector<std::string>{""} : c.groups);

      const engine::TaskEvalResult wrong = engine::evaluate_task(c.task, items, oracle(items, c.wrong, true));
      QCOMPARE(wrong.total.n, 60);
      QCOMPARE(wrong.total.correct, 0);
      QCOMPARE(wrong.total.accuracy(), 0.0);
      for (const auto& [name, count] : wrong.categories) QCOMPARE(count.correct, 0);
    }

    const auto chat = engine::generate_eval_items(EvalTask::Chat, 20, 2, 1);
    const auto right =
        engine::evaluate_task(EvalTask::Chat, chat, oracle(chat, [](const auto& i) { return i.expected; }, true));
    QCOMPARE(right.total.correct, 20);
    QCOMPARE(right.categories.size(), size_t(2));
    QCOMPARE(right.categories[0].first, std::string("in_template"));
    QCOMPARE(right.categories[1].first, std::string("stops"));
    // Never stopping (max_tokens reached) fails even with the right text; leaking a turn fails even
    // when stopping.
    const auto runsOn =
        engine::evaluate_task(EvalTask::Chat, chat, oracle(chat, [](const auto& i) { return i.expected; }, false));
    QCOMPARE(runsOn.total.correct, 0);
    QCOMPARE(runsOn.categories[0].second.correct, 20);  // in_template
    QCOMPARE(runsOn.categories[1].second.correct, 0);   // stops
    const auto leaks = engine::evaluate_task(
        EvalTask::Chat, chat, oracle(chat, [](const auto& i) { return i.expected + "\nUser: and then?"; }, true));
    QCOMPARE(leaks.total.correct, 0);
    QCOMPARE(leaks.categories[0].second.correct, 0);
    QCOMPARE(leaks.categories[1].second.correct, 20);
  }

  void examples_progress_and_stopping() {
    const auto items = engine::generate_eval_items(EvalTask::Arith, 12, 1, 1);
    engine::TaskEvalOptions o;
    o.examples = 3;
    std::vector<std::pair<int, int>> calls;
    o.progress = [&calls](int done, int total) {
      calls.emplace_back(done, total);
      return true;
    };
    const auto r =
        engine::evaluate_task(EvalTask::Arith, items, oracle(items, [](const auto& i) { return i.expected; }, true), o);
    QCOMPARE(r.examples.size(), size_t(3));
    QCOMPARE(r.examples[1].prompt, items[1].prompt);
    QCOMPARE(r.examples[1].reply, items[1].expected);
    QCOMPARE(r.examples[1].expected, items[1].expected);
    QVERIFY(r.examples[1].correct);
    QCOMPARE(calls.size(), size_t(12));
    QCOMPARE(calls.back(), std::make_pair(12, 12));

    int replies = 0;
    o.progress = [](int done, int) { return done < 4; };
    const engine::ReplyFunction counting = [&replies](const std::string&) {
      ++replies;
      return engine::ModelReply{"1", true};
    };
    QCOMPARE(errorOf([&] { engine::evaluate_task(EvalTask::Arith, items, counting, o); }), std::string("stopped"));
    QCOMPARE(replies, 4);
  }

  void json_schema() {
    const auto items = engine::generate_eval_items(EvalTask::Facts, 10, 1, 1);
    const auto r = engine::evaluate_task(EvalTask::Facts, items,
                                         oracle(items, [](const auto& i) { return i.expected + "\xff"; }, true));
    const json j = json::parse(engine::task_eval_json(r));
    QCOMPARE(j["task"].get<std::string>(), std::string("facts"));
    QCOMPARE(j["n"].get<int>(), 10);
    QCOMPARE(j["correct"].get<int>(), 10);
    QCOMPARE(j["accuracy"].get<double>(), 1.0);
    QVERIFY(j["categories"].is_object());
    for (const auto& [name, c] : j["categories"].items()) {
      QVERIFY2(c.contains("n") && c.contains("correct") && c.contains("accuracy"), name.c_str());
      QCOMPARE(c["accuracy"].get<double>(), double(c["correct"].get<int>()) / c["n"].get<int>());
    }
    QCOMPARE(j["examples"].size(), size_t(5));
    const json& e = j["examples"][0];
    QCOMPARE(e.size(), size_t(4));
    QCOMPARE(e["prompt"].get<std::string>(), items[0].prompt);
    QCOMPARE(e["expected"].get<std::string>(), items[0].expected);
    QVERIFY(e["correct"].get<bool>());
    QCOMPARE(e["reply"].get<std::string>(), items[0].expected + "\xef\xbf\xbd");  // bad UTF-8 replaced
    QCOMPARE(j.size(), size_t(6));
  }

  void greedy_replier_on_a_tiny_model() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("tiny"));
    writeTinyTextModel(path, 5, 64);
    const auto model = engine::load_model(path.toStdString());
    auto backend = engine::make_cpu_backend(1);
    const engine::ChatTemplate chatml(engine::ChatTemplateKind::ChatML);
    const engine::ReplyFunction reply = engine::greedy_chat_replier(*model, *backend, chatml, 6);
    const engine::ModelReply a = reply("What is 2 + 3?");
    QCOMPARE(reply("What is 2 + 3?").text, a.text);
    QVERIFY(!a.text.empty());

    int polls = 0;
    const engine::ReplyFunction stopped = engine::greedy_chat_replier(*model, *backend, chatml, 6, [&polls] {
      ++polls;
      return false;
    });
    const engine::ModelReply s = stopped("What is 2 + 3?");
    QVERIFY(polls >= 1);
    QVERIFY(!s.stopped);                  // cut short, not ended by the model
    QVERIFY(a.text.rfind(s.text, 0) == 0);  // the first token of the same reply
    QVERIFY(s.text.size() < a.text.size() || a.text.size() <= 4);

    const auto items = engine::generate_eval_items(EvalTask::Arith, 5, 1, 1);
    const auto r = engine::evaluate_task(EvalTask::Arith, items, reply);
    QCOMPARE(r.total.n, 5);
    QVERIFY(!errorOf([&] { engine::greedy_chat_replier(*model, *backend, chatml, 0); }).empty());
  }
};

QTEST_GUILESS_MAIN(TestTaskEval)
#include "test_task_eval.moc"
