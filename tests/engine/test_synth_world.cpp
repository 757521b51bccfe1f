// Tests for the generated world and its data sets (engine/train/synth_world.h).
//
// What is pinned down here: every set is a pure function of its seeds; the world is consistent
// (unique names, mutual friendships, six facts per character, about a fifth held out, friendship held
// out on both sides); nothing held out is ever told in a training set (questions, stories, "tell me
// about" replies); sums are right, never negative, and the train and eval pairs are disjoint; the chat,
// preference and prompt rows have the shapes the loaders and the alignment recipes expect, with
// answers that match the world.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "engine/train/synth_world.h"

using nlohmann::json;
namespace w = engine::world;

namespace {

std::vector<json> rows(const std::string& jsonl) {
  std::vector<json> out;
  std::istringstream in(jsonl);
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line));
  return out;
}

// "What is 12 + 7?" -> 19; fails the test for anything else.
long long solve(const std::string& q) {
  long long a = 0, b = 0;
  char op = 0;
  if (std::sscanf(q.c_str(), "What is %lld %c %lld?", &a, &op, &b) != 3) {
    QTest::qFail(("not a sum question: " + q).c_str(), __FILE__, __LINE__);
    return 0;
  }
  return op == '+' ? a + b : op == '-' ? a - b : a * b;
}

// A sum's answer as synth_world writes it: "a op b = r." for one-digit operands; otherwise one step per
// place from the ones up ("Ones: 8 + 7 = 15, carry 1. Tens: 4 + 5 + 1 = 10, carry 1. Hundreds: 3 + 0 + 1 =
// 4.") then "So a op b = r.". True when every step adds up, uses that place's digits and the carry of the
// one before, and the result is the steps' written digits read back from the highest place.
bool worked_answer_is_right(const std::string& question, const std::string& answer) {
  long long a = 0, b = 0;
  char op = 0;
  if (std::sscanf(question.c_str(), "What is %lld %c %lld?", &a, &op, &b) != 3) return false;
  const long long result = op == '+' ? a + b : op == '-' ? a - b : a * b;
  const std::string plain = std::to_string(a) + " " + op + " " + std::to_string(b) + " = " + std::to_string(result) + ".";
  if (a < 10 && b < 10) return answer == plain;
  const std::string tail = "So " + plain;
  if (answer.size() < tail.size() || answer.compare(answer.size() - tail.size(), tail.size(), tail) != 0) return false;
  static const char* const k_place[] = {"Ones", "Tens", "Hundreds", "Thousands"};
  const auto digit = [](long long x, int place) {
    for (int i = 0; i < place; ++i) x /= 10;
    return x % 10;
  };
  const int places = op == '*' ? static_cast<int>(std::to_string(b).size())
                               : static_cast<int>(std::to_string(std::max(a, b)).size());
  std::istringstream in(answer.substr(0, answer.size() - tail.size()));
  std::string written;  // the result's digits, highest place first
  long long carry = 0;
  for (int p = 0; p < places; ++p) {
    std::string label, step;
    in >> label;
    std::getline(in, step, '.');
    if (label != std::string(k_place[p]) + ":") return false;
    long long x = 0, y = 0, c = 0, v = 0, next = 0;
    char o1 = 0, o2 = 0;
    char word[16] = {};
    const int got = std::sscanf(step.c_str(), " %lld %c %lld %c %lld = %lld, %15s %lld", &x, &o1, &y, &o2, &c, &v, word, &next);
    if (got < 6) {  // no carry term: "x op y = v[, carry n]"
      c = 0;
      o2 = 0;
      if (std::sscanf(step.c_str(), " %lld %c %lld = %lld, %15s %lld", &x, &o1, &y, &v, word, &next) < 4) return false;
      next = std::strchr(step.c_str(), ',') ? next : 0;
    } else if (got < 8) {
      next = 0;
    }
    if (o1 != op || c != carry || (c && o2 != (op == '-' ? '-' : '+'))) return false;
    const long long want_x = op == '*' ? a : digit(a, p) + (op == '-' && x >= 10 ? 10 : 0);
    if (x != want_x || y != (op == '*' ? digit(b, p) : digit(b, p))) return false;
    if (v != (op == '+' ? x + y + c : op == '-' ? x - y - c : x * y + c)) return false;
    if (op == '-' && (v < 0 || v > 9 || (x >= 10) != (digit(a, p) - y - c < 0))) return false;
    if (next != 0 && std::string(word) != (op == '-' ? "borrow" : "carry")) return false;
    const bool last = p + 1 == places;
    const long long want_next = last ? 0 : op == '-' ? (x >= 10 ? 1 : 0) : v / 10;
    if (next != want_next) return false;
    written.insert(0, last ? std::to_string(v) : std::to_string(v % 10));
    carry = next;
  }
  while (written.size() > 1 && written[0] == '0') written.erase(0, 1);
  return written == std::to_string(result);
}

std::vector<std::string> paragraphs(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find("\n\n", pos);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 2;
  }
  return out;
}

bool mentions(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !std::isalpha(static_cast<unsigned char>(text[at - 1]));
    const size_t e = at + word.size();
    const bool right = e >= text.size() || !std::isalpha(static_cast<unsigned char>(text[e]));
    if (left && right) return true;
  }
  return false;
}

// True when `text`, told about character `ci` (its first sentence names it), reveals the held-out fact.
bool reveals(const w::World& world, const w::Fact& f, const std::string& text) {
  const w::Character& c = world.characters[static_cast<size_t>(f.character)];
  switch (f.relation) {
    case w::Relation::LivesIn:
    case w::Relation::Friend:
    case w::Relation::Owns:
    case w::Relation::ItemColour: return mentions(text, f.key);
    case w::Relation::ItemSize:
      return text.find(f.key + " " + c.item) != std::string::npos ||
             text.find(f.key + " " + c.item_colour + " " + c.item) != std::string::npos;
    case w::Relation::Kind: return false;
  }
  return false;
}

}  // namespace

class TestSynthWorld : public QObject {
  Q_OBJECT

 private slots:
  void sets_are_pure_functions_of_their_seeds() {
    const w::World a = w::make_world(1), b = w::make_world(1), c = w::make_world(2);
    QCOMPARE(w::chat_jsonl(a, 50, 3, w::Split::Train), w::chat_jsonl(b, 50, 3, w::Split::Train));
    QVERIFY(w::chat_jsonl(a, 50, 3, w::Split::Train) != w::chat_jsonl(a, 50, 4, w::Split::Train));
    QVERIFY(w::facts_jsonl(a, 50, 3, w::Split::Train) != w::facts_jsonl(c, 50, 3, w::Split::Train));
    QCOMPARE(w::stories(a, 20, 9), w::stories(b, 20, 9));
    QCOMPARE(w::arith_jsonl(40, 5, w::Split::Eval), w::arith_jsonl(40, 5, w::Split::Eval));
    QCOMPARE(w::stories(a, 0, 1), std::string());
  }

  void the_world_is_consistent() {
    for (uint64_t seed : {1u, 2u, 3u, 77u}) {
      const w::World world = w::make_world(seed);
      QCOMPARE(world.characters.size(), size_t{24});
      std::set<std::string> names;
      for (const auto& ch : world.characters) names.insert(ch.name);
      QCOMPARE(names.size(), world.characters.size());
      for (size_t i = 0; i < world.characters.size(); ++i) {
        const int f = world.characters[i].friend_;
        QVERIFY(f != static_cast<int>(i));
        QCOMPARE(world.characters[static_cast<size_t>(f)].friend_, static_cast<int>(i));
      }
      QCOMPARE(world.facts.size(), world.characters.size() * 6);
      int unseen = 0;
      for (const w::Fact& f : world.facts) {
        unseen += !f.seen;
        if (f.relation == w::Relation::Kind) QVERIFY(f.seen);
        QVERIFY2(f.answer.find(f.key) != std::string::npos, f.answer.c_str());
        if (f.relation == w::Relation::Friend) {
          const int other = world.characters[static_cast<size_t>(f.character)].friend_;
          for (const w::Fact& g : world.facts)
            if (g.character == other && g.relation == w::Relation::Friend) QCOMPARE(g.seen, f.seen);
        }
      }
      QVERIFY2(unseen >= 14 && unseen <= 45, std::to_string(unseen).c_str());  // about a fifth of 144
    }
  }

  void held_out_facts_are_never_told_in_training_sets() {
    const w::World world = w::make_world(1);
    std::set<std::string> unseen_questions;
    for (const w::Fact& f : world.facts)
      if (!f.seen) unseen_questions.insert(f.question);
    QVERIFY(!unseen_questions.empty());
    // Questions: facts, chat, preferences and prompts of the training split never ask them.
    for (const json& r : rows(w::facts_jsonl(world, 2000, 1, w::Split::Train))) {
      QVERIFY(!unseen_questions.count(r["question"]));
      QVERIFY(r["seen"].get<bool>());
    }
    for (const json& r : rows(w::prefs_jsonl(world, 2000, 1, w::Split::Train))) QVERIFY(!unseen_questions.count(r["prompt"]));
    for (const json& r : rows(w::prompts_jsonl(world, 2000, 1, w::Split::Train)))
      QVERIFY(!unseen_questions.count(r["prompt"]));
    std::vector<std::string> told;  // texts about one character: stories and "tell me about" replies
    for (const json& r : rows(w::chat_jsonl(world, 3000, 1, w::Split::Train))) {
      const json& m = r["messages"];
      for (size_t i = 0; i + 1 < m.size(); i += 2) {
        const std::string q = m[i]["content"];
        QVERIFY2(!unseen_questions.count(q), q.c_str());
        if (q.rfind("Tell me about ", 0) == 0) told.push_back(m[i + 1]["content"]);
      }
    }
    for (const std::string& p : paragraphs(w::stories(world, 3000, 1))) told.push_back(p);
    // Each told text is about the character its first sentence names; it must not reveal any of that
    // character's held-out facts.
    int checked = 0;
    for (const std::string& text : told) {
      const std::string first = text.substr(0, text.find(". "));
      for (const w::Fact& f : world.facts) {
        if (f.seen || !mentions(first, world.characters[static_cast<size_t>(f.character)].name)) continue;
        ++checked;
        QVERIFY2(!reveals(world, f, text), (f.question + " is held out, but told: " + text).c_str());
      }
    }
    QVERIFY(checked > 100);
    // The evaluation split does ask held-out facts.
    bool asked_unseen = false;
    for (const json& r : rows(w::facts_jsonl(world, 500, 1, w::Split::Eval))) asked_unseen |= !r["seen"].get<bool>();
    QVERIFY(asked_unseen);
  }

  void pretraining_corpus_mixes_stories_facts_and_sums_of_the_training_split() {
    const w::World world = w::make_world(1);
    std::set<std::string> unseen_questions, eval_sums;
    for (const w::Fact& f : world.facts)
      if (!f.seen) unseen_questions.insert(f.question);
    for (const json& r : rows(w::arith_jsonl(5000, 3, w::Split::Eval))) eval_sums.insert(r["question"]);
    const std::string text = w::pretraining_corpus(world, 600, 1, w::Split::Train);
    QCOMPARE(text, w::pretraining_corpus(world, 600, 1, w::Split::Train));
    int stories = 0, fact_blocks = 0, sum_lines = 0;
    for (const std::string& doc : paragraphs(text)) {
      if (doc.rfind("What is ", 0) == 0 && doc.find(" = ") != std::string::npos) {
        size_t start = 0;
        while (start < doc.size()) {
          size_t end = doc.find('\n', start);
          if (end == std::string::npos) end = doc.size();
          const std::string line = doc.substr(start, end - start);
          const size_t q = line.find("? ");
          QVERIFY2(q != std::string::npos, line.c_str());
          const std::string question = line.substr(0, q + 1), answer = line.substr(q + 2);
          QVERIFY2(!eval_sums.count(question), line.c_str());
          QVERIFY2(worked_answer_is_right(question, answer), line.c_str());
          ++sum_lines;
          start = end + 1;
        }
      } else if (doc.find("? ") != std::string::npos) {
        for (const std::string& q : unseen_questions) QVERIFY2(doc.find(q) == std::string::npos, q.c_str());
        ++fact_blocks;
      } else {
        ++stories;
      }
    }
    // Two in five stories, one in five fact blocks, two in five sum blocks (of eight lines each).
    QVERIFY2(stories > 180 && stories < 300, std::to_string(stories).c_str());
    QVERIFY2(fact_blocks > 80 && fact_blocks < 160, std::to_string(fact_blocks).c_str());
    QVERIFY2(sum_lines > 8 * 180 && sum_lines < 8 * 300, std::to_string(sum_lines).c_str());
  }

  void sums_are_right_and_the_splits_disjoint() {
    std::set<std::string> train, eval;
    std::map<std::string, int> ops;
    for (const json& r : rows(w::arith_jsonl(5000, 1, w::Split::Train))) {
      const std::string q = r["question"];
      QCOMPARE(r["answer"].get<std::string>(), std::to_string(solve(q)));
      QVERIFY(solve(q) >= 0);
      QVERIFY(r["digits"].get<int>() >= 1 && r["digits"].get<int>() <= 3);
      ++ops[r["op"]];
      train.insert(q);
    }
    for (const json& r : rows(w::arith_jsonl(5000, 2, w::Split::Eval))) {
      QCOMPARE(r["answer"].get<std::string>(), std::to_string(solve(r["question"])));
      eval.insert(r["question"]);
    }
    QCOMPARE(ops.size(), size_t{3});
    QVERIFY(ops["+"] > 1000 && ops["-"] > 1000 && ops["*"] > 500);
    for (const std::string& q : eval) QVERIFY2(!train.count(q), q.c_str());
    QVERIFY(eval.size() > 1000);
  }

  void chat_rows_alternate_and_answer_from_the_world() {
    const w::World world = w::make_world(1);
    std::map<std::string, std::string> answer_of;
    for (const w::Fact& f : world.facts) answer_of[f.question] = f.answer;
    int facts = 0, sums = 0, refusals = 0;
    for (const json& r : rows(w::chat_jsonl(world, 2000, 7, w::Split::Train))) {
      const json& m = r["messages"];
      QVERIFY(m.size() >= 2 && m.size() <= 6 && m.size() % 2 == 0);
      for (size_t i = 0; i < m.size(); ++i) {
        QCOMPARE(m[i]["role"].get<std::string>(), std::string(i % 2 ? "assistant" : "user"));
        QVERIFY(!m[i]["content"].get<std::string>().empty());
      }
      for (size_t i = 0; i < m.size(); i += 2) {
        const std::string q = m[i]["content"], a = m[i + 1]["content"];
        if (answer_of.count(q)) {
          QCOMPARE(a, answer_of[q]);
          ++facts;
        } else if (q.rfind("What is ", 0) == 0 && std::isdigit(static_cast<unsigned char>(q[8]))) {
          QVERIFY2(worked_answer_is_right(q, a), a.c_str());
          ++sums;
        } else if (a.find("I do not know") != std::string::npos || a.find("I am sorry") != std::string::npos) {
          ++refusals;
        }
      }
    }
    QVERIFY(facts > 500 && sums > 400 && refusals > 100);
  }

  void preference_pairs_prefer_the_right_answer() {
    const w::World world = w::make_world(1);
    std::map<std::string, std::string> answer_of;
    for (const w::Fact& f : world.facts) answer_of[f.question] = f.answer;
    std::map<std::string, int> kinds;
    for (const json& r : rows(w::prefs_jsonl(world, 1500, 3, w::Split::Train))) {
      const std::string p = r["prompt"], chosen = r["chosen"], rejected = r["rejected"];
      QVERIFY(chosen != rejected);
      ++kinds[r["kind"]];
      if (answer_of.count(p)) QCOMPARE(chosen, answer_of[p]);
      else QVERIFY2(worked_answer_is_right(p, chosen), chosen.c_str());
      // A wrong sum is worked the same way up to its last number: the pair differs in being right.
      if (r["kind"] == "correct" && !answer_of.count(p))
        QVERIFY2(!worked_answer_is_right(p, rejected) && rejected.substr(0, rejected.rfind(" = ")) ==
                                                             chosen.substr(0, chosen.rfind(" = ")),
                 rejected.c_str());
    }
    QCOMPARE(kinds.size(), size_t{3});
    for (const auto& [k, n] : kinds) QVERIFY2(n > 350, k.c_str());
  }

  void held_out_preference_pairs_ask_known_knowledge_in_new_pairings() {
    const w::World world = w::make_world(1);
    std::map<std::string, bool> seen_of;
    for (const w::Fact& f : world.facts) seen_of[f.question] = f.seen;
    // Every right-vs-wrong pairing any training file could hold (four seeds cover the few per fact).
    std::set<std::pair<std::string, std::string>> train_pairs;
    std::set<std::string> train_prompts;
    for (uint64_t seed : {1, 2, 3, 4})
      for (const json& r : rows(w::prefs_jsonl(world, 3000, seed, w::Split::Train))) {
        train_prompts.insert(r["prompt"].get<std::string>());
        if (r["kind"] == "correct") train_pairs.emplace(r["prompt"].get<std::string>(), r["rejected"].get<std::string>());
      }
    const auto operands = [](const std::string& q) {
      long long a = 0, b = 0;
      char op = 0;
      std::sscanf(q.c_str(), "What is %lld %c %lld?", &a, &op, &b);
      return std::tuple{a, op, b};
    };

    // Known (the default): seen facts with a wrong answer no training pair uses; held-out sums of up to two
    // digits, added or subtracted; the other kinds as in training.
    const std::string known = w::prefs_jsonl(world, 1500, 4, w::Split::Eval);
    QCOMPARE(known, w::prefs_jsonl(world, 1500, 4, w::Split::Eval, w::PrefsKnowledge::Known));
    std::map<std::string, int> kinds;
    int fact_pairs = 0, sum_pairs = 0;
    for (const json& r : rows(known)) {
      ++kinds[r["kind"]];
      if (r["kind"] != "correct") continue;
      const std::string p = r["prompt"], chosen = r["chosen"], rejected = r["rejected"];
      QVERIFY2(!train_pairs.count({p, rejected}), rejected.c_str());
      if (seen_of.count(p)) {
        QVERIFY2(seen_of[p], p.c_str());
        ++fact_pairs;
      } else {
        const auto [a, op, b] = operands(p);
        QVERIFY2((op == '+' || op == '-') && a < 100 && b < 100, p.c_str());
        QVERIFY2(!train_prompts.count(p), p.c_str());
        QVERIFY(worked_answer_is_right(p, chosen) && !worked_answer_is_right(p, rejected));
        ++sum_pairs;
      }
    }
    QCOMPARE(kinds.size(), size_t{3});
    QVERIFY(fact_pairs > 150 && sum_pairs > 150);

    // Unseen: only right-vs-wrong pairs, over held-out facts and the sums the starter does not work out.
    int unseen_facts = 0, hard_sums = 0;
    for (const json& r : rows(w::prefs_jsonl(world, 600, 4, w::Split::Eval, w::PrefsKnowledge::Unseen))) {
      QCOMPARE(r["kind"].get<std::string>(), std::string("correct_unseen"));
      const std::string p = r["prompt"];
      QVERIFY(r["chosen"] != r["rejected"]);
      if (seen_of.count(p)) {
        QVERIFY2(!seen_of[p], p.c_str());
        ++unseen_facts;
      } else {
        const auto [a, op, b] = operands(p);
        QVERIFY2(op == '*' || a >= 100 || b >= 100, p.c_str());
        QVERIFY2(!train_prompts.count(p), p.c_str());
        ++hard_sums;
      }
    }
    QVERIFY(unseen_facts > 150 && hard_sums > 150);

    // All: the earlier mix, seen and held-out facts alike.
    std::set<bool> asked;
    for (const json& r : rows(w::prefs_jsonl(world, 600, 4, w::Split::Eval, w::PrefsKnowledge::All)))
      if (r["kind"] == "correct" && seen_of.count(r["prompt"].get<std::string>()))
        asked.insert(seen_of[r["prompt"].get<std::string>()]);
    QCOMPARE(asked.size(), size_t{2});
    // The option never changes a training file.
    QCOMPARE(w::prefs_jsonl(world, 300, 5, w::Split::Train, w::PrefsKnowledge::Unseen),
             w::prefs_jsonl(world, 300, 5, w::Split::Train));
  }

  void prompts_carry_checkable_answers() {
    const w::World world = w::make_world(1);
    std::map<std::string, std::string> key_of;
    for (const w::Fact& f : world.facts) key_of[f.question] = f.key;
    for (const json& r : rows(w::prompts_jsonl(world, 1000, 4, w::Split::Eval))) {
      const std::string p = r["prompt"], answer = r["answer"], kind = r["kind"];
      if (kind == "arith") QCOMPARE(answer, std::to_string(solve(p)));
      else QCOMPARE(answer, key_of.at(p));
    }
  }
};

QTEST_APPLESS_MAIN(TestSynthWorld)
#include "test_synth_world.moc"
