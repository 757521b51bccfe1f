// The generated world and its data sets: see engine/train/synth_world.h.
//
// Sentences come from small templates with several phrasings each, so a tiny model must learn the
// facts rather than one fixed sentence. Every set draws from its own splitmix64 stream (the sample
// seed mixed with a per-set constant), so adding a set never changes another.
#include "engine/train/synth_world.h"

#include <algorithm>
#include <array>
#include <optional>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "engine/error.h"
#include "engine/train/data_loader.h"

namespace engine::world {
namespace {

using nlohmann::json;

struct Rng {
  uint64_t state;
  // Uniform in [0, n): the modulo bias of a 64-bit draw over ranges this small is irrelevant.
  uint64_t below(uint64_t n) { return splitmix64_next(state) % n; }
  template <size_t N>
  std::string_view pick(const std::array<std::string_view, N>& a) {
    return a[below(N)];
  }
  bool chance(uint64_t percent) { return below(100) < percent; }
};

constexpr std::array<std::string_view, 16> k_girls = {"Mia", "Lily", "Sara", "Ana", "Emma", "Zoe", "Lucy", "Amy",
                                                      "Nora", "Ella", "Ruby", "Kim", "Ivy", "Jade", "Rosa", "Tess"};
constexpr std::array<std::string_view, 16> k_boys = {"Tom", "Max", "Ben", "Leo", "Sam", "Jack", "Tim", "Dan",
                                                     "Finn", "Owen", "Noah", "Eli", "Hugo", "Carl", "Paul", "Ravi"};
constexpr std::array<std::string_view, 10> k_kinds = {"girl", "boy", "cat", "dog", "fox",
                                                      "bear", "duck", "mouse", "owl", "rabbit"};
// Each place with the preposition one lives there with.
constexpr std::array<std::array<std::string_view, 2>, 10> k_places = {{{"in", "the red house"},
                                                                      {"at", "the old mill"},
                                                                      {"above", "the bakery"},
                                                                      {"on", "the big farm"},
                                                                      {"on", "the blue boat"},
                                                                      {"in", "the tall tower"},
                                                                      {"near", "the little school"},
                                                                      {"in", "the green tent"},
                                                                      {"by", "the stone bridge"},
                                                                      {"in", "the apple garden"}}};
constexpr std::array<std::string_view, 12> k_items = {"kite", "ball", "hat",  "drum",  "book",  "bike",
                                                      "lamp", "cup",  "bell", "scarf", "clock", "boat"};
constexpr std::array<std::string_view, 8> k_colours = {"red", "blue", "green", "yellow",
                                                       "white", "black", "pink", "orange"};
// Names the world never uses, for "I don't know anyone called ..." refusals.
constexpr std::array<std::string_view, 8> k_strangers = {"Zed", "Olga", "Bruno", "Yuki",
                                                         "Igor", "Nina", "Oscar", "Vera"};
constexpr std::array<std::string_view, 10> k_outside = {"What is the capital of France?",
                                                        "Who wrote Hamlet?",
                                                        "How far away is the moon?",
                                                        "What is the weather in Tokyo today?",
                                                        "Who won the football match yesterday?",
                                                        "What is the price of gold?",
                                                        "How do I fix my car?",
                                                        "What is the speed of light?",
                                                        "Which phone should I buy?",
                                                        "Who is the president of Brazil?"};
constexpr std::array<std::string_view, 6> k_greetings = {"Hello!", "Hi!", "Hello, who are you?",
                                                         "Good morning!", "Hi there!", "What can you do?"};
constexpr std::array<std::string_view, 4> k_thanks = {"Thank you!", "Thanks!", "Great, thanks.", "Thank you very much."};

constexpr const char* k_intro =
    "Hello! I am a small model. I know the people and animals of my little world, and I can add, subtract "
    "and multiply numbers.";
constexpr const char* k_unknown_world =
    "I am sorry, I do not know. I only know about the people and places of my little world.";

std::string cap(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}
std::string article(std::string_view noun) {
  const char c = noun.empty() ? 'x' : noun[0];
  return (c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' ? "an " : "a ") + std::string(noun);
}
std::string he(const Character& c) { return c.she ? "she" : "he"; }
std::string his(const Character& c) { return c.she ? "her" : "his"; }
// "on the big farm"
std::string where(const World& w, const Character& c) {
  const Place& p = w.places[static_cast<size_t>(c.place)];
  return p.preposition + " " + p.name;
}
// The item with its colour and size: "a small blue kite".
std::string item_phrase(const Character& c) { return "a " + c.item_size + " " + c.item_colour + " " + c.item; }

Fact make_fact(const World& w, int ci, Relation rel, Rng& r) {
  const Character& c = w.characters[static_cast<size_t>(ci)];
  Fact f;
  f.character = ci;
  f.relation = rel;
  switch (rel) {
    case Relation::Kind:
      f.question = "What is " + c.name + "?";
      f.answer = c.name + " is " + article(c.kind) + ".";
      f.key = c.kind;
      break;
    case Relation::LivesIn:
      f.question = "Where does " + c.name + " live?";
      f.answer = c.name + " lives " + where(w, c) + ".";
      f.key = w.places[static_cast<size_t>(c.place)].name;
      break;
    case Relation::Friend:
      f.question = "Who is " + c.name + "'s friend?";
      f.answer = c.name + "'s friend is " + w.characters[static_cast<size_t>(c.friend_)].name + ".";
      f.key = w.characters[static_cast<size_t>(c.friend_)].name;
      break;
    case Relation::Owns:
      f.question = "What does " + c.name + " have?";
      f.answer = c.name + " has " + item_phrase(c) + ".";
      f.key = c.item;
      break;
    case Relation::ItemColour:
      f.question = "What colour is " + c.name + "'s " + c.item + "?";
      f.answer = c.name + "'s " + c.item + " is " + c.item_colour + ".";
      f.key = c.item_colour;
      break;
    case Relation::ItemSize:
      f.question = "Is " + c.name + "'s " + c.item + " big or small?";
      f.answer = c.name + "'s " + c.item + " is " + c.item_size + ".";
      f.key = c.item_size;
      break;
  }
  // Held out: one fact in five, but never a character's kind (every story needs it).
  f.seen = rel == Relation::Kind || !r.chance(20);
  return f;
}

// The fact's answer sentence with another key in it ("Mia lives in the old mill." for key "the old mill").
std::string answer_with_key(const World& w, const Fact& f, const std::string& key) {
  if (f.relation == Relation::Kind) return w.characters[static_cast<size_t>(f.character)].name + " is " + article(key) + ".";
  return f.answer.substr(0, f.answer.size() - f.key.size() - 1) + key + ".";
}

const Fact* find_fact(const World& w, int ci, Relation rel) {
  for (const Fact& f : w.facts)
    if (f.character == ci && f.relation == rel) return &f;
  return nullptr;
}
bool seen(const World& w, int ci, Relation rel) {
  const Fact* f = find_fact(w, ci, rel);
  return f && f->seen;
}

std::vector<const Fact*> facts_of_split(const World& w, Split split) {
  std::vector<const Fact*> out;
  for (const Fact& f : w.facts)
    if (split == Split::Eval || f.seen) out.push_back(&f);
  return out;
}

// --- arithmetic -------------------------------------------------------------------------------------

struct Sum {
  int64_t a = 0, b = 0;
  char op = '+';
  int64_t result() const { return op == '+' ? a + b : op == '-' ? a - b : a * b; }
  std::string question() const { return "What is " + std::to_string(a) + " " + op + " " + std::to_string(b) + "?"; }
  std::string statement() const { return statement_with(result()); }
  std::string statement_with(int64_t value) const {
    return std::to_string(a) + " " + op + " " + std::to_string(b) + " = " + std::to_string(value) + ".";
  }
  int digits() const { return static_cast<int>(std::to_string(std::max(a, b)).size()); }
  // The answer as a small model can learn it: for operands of more than one digit, one step per place
  // from the ones up, each a one-digit fact with its carry (or borrow), then the result. A model that
  // has learned the hundred one-digit facts and where each place's digits are can add numbers it
  // never saw; the plain statement can only be recalled. `value` replaces the result in the last
  // sentence (a fluent wrong answer for preference pairs).
  std::string worked() const { return worked_with(result()); }
  std::string worked_with(int64_t value) const;
};

std::string Sum::worked_with(int64_t value) const {
  if (a < 10 && b < 10) return statement_with(value);
  static constexpr std::array<const char*, 4> k_place = {"Ones", "Tens", "Hundreds", "Thousands"};
  const auto digit = [](int64_t x, int place) {
    for (int i = 0; i < place; ++i) x /= 10;
    return x % 10;
  };
  const auto str = [](int64_t x) { return std::to_string(x); };
  std::string out;
  if (op == '*') {  // a is one digit: one step per digit of b, the carry is the product's tens
    const int places = static_cast<int>(str(b).size());
    int64_t carry = 0;
    for (int p = 0; p < places; ++p) {
      const int64_t bd = digit(b, p), v = a * bd + carry;
      out += std::string(p ? " " : "") + k_place[static_cast<size_t>(p)] + ": " + str(a) + " * " + str(bd) +
             (carry ? " + " + str(carry) : "") + " = " + str(v);
      carry = v / 10;
      out += p + 1 < places && carry ? ", carry " + str(carry) + "." : ".";
    }
  } else {
    const int places = digits();
    int64_t carry = 0;  // the carry of a sum, the borrow of a difference
    for (int p = 0; p < places; ++p) {
      const int64_t ad = digit(a, p), bd = digit(b, p);
      const bool last = p + 1 == places;
      out += std::string(p ? " " : "") + k_place[static_cast<size_t>(p)] + ": ";
      if (op == '+') {
        const int64_t v = ad + bd + carry;
        out += str(ad) + " + " + str(bd) + (carry ? " + " + str(carry) : "") + " = " + str(v);
        carry = v / 10;
      } else {
        const bool borrow = ad - bd - carry < 0;  // never at the last place: a >= b
        const int64_t top = ad + (borrow ? 10 : 0);
        out += str(top) + " - " + str(bd) + (carry ? " - " + str(carry) : "") + " = " + str(top - bd - carry);
        carry = borrow ? 1 : 0;
      }
      out += !last && carry ? (op == '+' ? ", carry " : ", borrow ") + str(carry) + "." : std::string(".");
    }
  }
  return out + " So " + statement_with(value);
}

// A fixed fifth of all (a, op, b) belongs to the evaluation split, chosen by a hash of the triple.
bool is_eval_pair(const Sum& s) {
  uint64_t h = (static_cast<uint64_t>(s.a) << 32) ^ (static_cast<uint64_t>(s.b) << 8) ^ static_cast<uint64_t>(s.op);
  return splitmix64_next(h) % 5 == 0;
}

Sum draw_sum(Rng& r, Split split) {
  for (;;) {
    Sum s;
    const uint64_t kind = r.below(10);
    if (kind < 2) {  // multiplication: 1 digit x up to 2 digits
      s.op = '*';
      s.a = static_cast<int64_t>(2 + r.below(8));
      s.b = static_cast<int64_t>(r.below(2) ? 2 + r.below(8) : 10 + r.below(90));
    } else {
      s.op = kind < 6 ? '+' : '-';
      static constexpr std::array<int64_t, 4> k_limit = {10, 10, 100, 1000};
      const int64_t limit = k_limit[r.below(4)];
      s.a = static_cast<int64_t>(r.below(static_cast<uint64_t>(limit)));
      s.b = static_cast<int64_t>(r.below(static_cast<uint64_t>(limit)));
      if (s.op == '-' && s.b > s.a) std::swap(s.a, s.b);
    }
    if (is_eval_pair(s) == (split == Split::Eval)) return s;
  }
}

// Which split may pair a fact with a wrong answer in a right-vs-wrong preference pair: a fixed half of all
// (question, wrong key) pairings, by a hash, is only used by Split::Eval, so its pairs are new to a reward
// model trained on Split::Train.
bool is_eval_pairing(const Fact& f, const std::string& wrong_key) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a over "question|key", then mixed
  for (const char c : f.question + "|" + wrong_key) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  return splitmix64_next(h) % 2 == 0;
}

// The keys of the same relation of other characters that differ from the fact's own: the fluent wrong
// answers to its question, in world order without repeats; only those of `side`'s pairings when given.
std::vector<std::string> wrong_keys(const World& w, const Fact& f, std::optional<Split> side) {
  std::vector<std::string> out;
  for (const Fact& g : w.facts) {
    if (g.relation != f.relation || g.key == f.key || std::find(out.begin(), out.end(), g.key) != out.end()) continue;
    if (side && is_eval_pairing(f, g.key) != (*side == Split::Eval)) continue;
    out.push_back(g.key);
  }
  return out;
}

// Sums the starter works out right (> 90 % of held-out ones): addition and subtraction of operands up to two
// digits. Three-digit sums and products it gets wrong too often for a preference between a right and a wrong
// result to be about anything it knows.
bool is_known_sum(const Sum& s) { return s.op != '*' && s.digits() <= 2; }

// --- telling about characters -----------------------------------------------------------------------

// A few sentences about one character, from its seen facts, in one of several orders and phrasings.
std::string describe(const World& w, int ci, Rng& r) {
  const Character& c = w.characters[static_cast<size_t>(ci)];
  std::string out;
  switch (r.below(3)) {
    case 0: out += c.name + " is " + article(c.kind) + ". "; break;
    case 1: out += "There is " + article(c.kind) + " called " + c.name + ". "; break;
    default: out += "Let me tell you about " + c.name + ". " + c.name + " is " + article(c.kind) + ". "; break;
  }
  if (seen(w, ci, Relation::LivesIn))
    out += (r.below(2) ? cap(he(c)) : c.name) + " lives " + where(w, c) + ". ";
  if (seen(w, ci, Relation::Owns)) {
    // Colour and size are told only when they are seen facts.
    std::string thing = "a ";
    if (seen(w, ci, Relation::ItemSize)) thing += c.item_size + " ";
    if (seen(w, ci, Relation::ItemColour)) thing += c.item_colour + " ";
    thing += c.item;
    out += r.below(2) ? cap(he(c)) + " has " + thing + ". " : c.name + " owns " + thing + ". ";
  }
  if (seen(w, ci, Relation::Friend)) {
    const Character& f = w.characters[static_cast<size_t>(c.friend_)];
    out += r.below(2) ? cap(his(c)) + " friend is " + f.name + ". " : c.name + " and " + f.name + " are friends. ";
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string one_story(const World& w, Rng& r) {
  const int ci = static_cast<int>(r.below(w.characters.size()));
  const Character& c = w.characters[static_cast<size_t>(ci)];
  std::string out = describe(w, ci, r) + " ";
  const bool home = seen(w, ci, Relation::LivesIn);
  const std::string place = w.places[static_cast<size_t>(c.place)].name;
  const bool owns = seen(w, ci, Relation::Owns);
  const bool has_friend = seen(w, ci, Relation::Friend);
  const std::string friend_name = w.characters[static_cast<size_t>(c.friend_)].name;
  switch (r.below(3)) {
    case 0:
      out += "One morning, " + c.name + " woke up early";
      out += home ? " " + where(w, c) + ". " : ". ";
      break;
    case 1: out += "One sunny day, " + c.name + " went outside. "; break;
    default: out += "It was a quiet evening. "; break;
  }
  if (owns && has_friend)
    out += c.name + " took " + his(c) + " " + c.item + " and went to see " + friend_name + ". They played with the " +
           c.item + " all day. ";
  else if (owns)
    out += c.name + " played with " + his(c) + " " + c.item + ". ";
  else if (has_friend)
    out += c.name + " and " + friend_name + " went for a long walk. ";
  else
    out += c.name + " sat down and listened to the birds. ";
  switch (r.below(3)) {
    case 0: out += "In the end, " + c.name + " was very happy."; break;
    case 1: out += home ? "At night, " + he(c) + " went back to " + place + "." : "At night, " + he(c) + " went home."; break;
    default: out += "It was a good day."; break;
  }
  return out;
}

json message(const char* role, const std::string& content) { return {{"role", role}, {"content", content}}; }

// One user turn and its reply, drawn from the mix the chat set promises.
std::pair<std::string, std::string> exchange(const World& w, Rng& r, Split split,
                                             const std::vector<const Fact*>& facts) {
  const uint64_t kind = r.below(100);
  if (kind < 40) {
    const Fact& f = *facts[r.below(facts.size())];
    return {f.question, f.answer};
  }
  if (kind < 70) {
    const Sum s = draw_sum(r, split);
    return {s.question(), s.worked()};
  }
  if (kind < 78) return {std::string(r.pick(k_greetings)), k_intro};
  if (kind < 88) {
    const int ci = static_cast<int>(r.below(w.characters.size()));
    return {"Tell me about " + w.characters[static_cast<size_t>(ci)].name + ".", describe(w, ci, r)};
  }
  if (kind < 94) {
    const std::string name(r.pick(k_strangers));
    return {"Where does " + name + " live?",
            "I do not know anyone called " + name + ". I only know the people and animals of my little world."};
  }
  return {std::string(r.pick(k_outside)), k_unknown_world};
}

std::string to_lines(const std::vector<json>& rows) {
  std::string out;
  for (const json& j : rows) out += j.dump() + "\n";
  return out;
}

void check_n(int64_t n) {
  if (n < 0) throw Error("synthetic data: a negative number of items");
}

}  // namespace

const char* relation_name(Relation r) {
  switch (r) {
    case Relation::Kind: return "kind";
    case Relation::LivesIn: return "lives_in";
    case Relation::Friend: return "friend";
    case Relation::Owns: return "owns";
    case Relation::ItemColour: return "item_colour";
    case Relation::ItemSize: return "item_size";
  }
  return "?";
}

World make_world(uint64_t world_seed) {
  World w;
  w.seed = world_seed;
  Rng r{world_seed ^ 0x3D0C7A11E5EEDull};
  for (const auto& [at, name] : k_places) w.places.push_back({std::string(name), std::string(at)});
  // 12 girls and 12 boys, drawn without repetition.
  std::vector<std::string_view> girls(k_girls.begin(), k_girls.end()), boys(k_boys.begin(), k_boys.end());
  for (int i = 0; i < 24; ++i) {
    std::vector<std::string_view>& pool = i % 2 ? boys : girls;
    const size_t at = r.below(pool.size());
    Character c;
    c.name = std::string(pool[at]);
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(at));
    c.she = i % 2 == 0;
    c.kind = std::string(r.pick(k_kinds));
    if (c.kind == "girl" || c.kind == "boy") c.kind = c.she ? "girl" : "boy";
    c.place = static_cast<int>(r.below(w.places.size()));
    c.item = std::string(r.pick(k_items));
    c.item_colour = std::string(r.pick(k_colours));
    c.item_size = r.below(2) ? "big" : "small";
    w.characters.push_back(std::move(c));
  }
  // Friendships: a random perfect matching, so "X's friend is Y" and "Y's friend is X" both hold.
  std::vector<int> order(w.characters.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[r.below(i + 1)]);
  for (size_t i = 0; i + 1 < order.size(); i += 2) {
    w.characters[static_cast<size_t>(order[i])].friend_ = order[i + 1];
    w.characters[static_cast<size_t>(order[i + 1])].friend_ = order[i];
  }
  for (int ci = 0; ci < static_cast<int>(w.characters.size()); ++ci)
    for (Relation rel : {Relation::Kind, Relation::LivesIn, Relation::Friend, Relation::Owns, Relation::ItemColour,
                         Relation::ItemSize})
      w.facts.push_back(make_fact(w, ci, rel, r));
  // Friendship is told from both sides ("Mia and Ben are friends"), so it is held out for both or neither.
  for (Fact& f : w.facts)
    if (f.relation == Relation::Friend && f.seen) {
      const int other = w.characters[static_cast<size_t>(f.character)].friend_;
      f.seen = find_fact(w, other, Relation::Friend)->seen;
    }
  return w;
}

std::string stories(const World& w, int64_t n, uint64_t seed) {
  check_n(n);
  Rng r{seed ^ 0x570E1E5ull};
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += "\n\n";
    out += one_story(w, r);
  }
  if (n > 0) out += "\n";
  return out;
}

std::string pretraining_corpus(const World& w, int64_t n, uint64_t seed, Split split) {
  check_n(n);
  Rng r{seed ^ 0xC0A905ull};
  const std::vector<const Fact*> facts = facts_of_split(w, split);
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += "\n\n";
    const uint64_t kind = r.below(5);
    if (kind < 2) {
      out += one_story(w, r);
    } else if (kind < 3) {
      for (int line = 0; line < 8; ++line) {
        const Fact& f = *facts[r.below(facts.size())];
        out += (line ? "\n" : "") + f.question + " " + f.answer;
      }
    } else {
      for (int line = 0; line < 8; ++line) {
        const Sum s = draw_sum(r, split);
        out += (line ? "\n" : "") + s.question() + " " + s.worked();
      }
    }
  }
  if (n > 0) out += "\n";
  return out;
}

std::string facts_jsonl(const World& w, int64_t n, uint64_t seed, Split split) {
  check_n(n);
  Rng r{seed ^ 0xFAC75ull};
  const std::vector<const Fact*> pool = facts_of_split(w, split);
  std::vector<json> rows;
  for (int64_t i = 0; i < n; ++i) {
    const Fact& f = *pool[r.below(pool.size())];
    rows.push_back({{"question", f.question},
                    {"answer", f.answer},
                    {"key", f.key},
                    {"relation", relation_name(f.relation)},
                    {"seen", f.seen}});
  }
  return to_lines(rows);
}

std::string arith_jsonl(int64_t n, uint64_t seed, Split split) {
  check_n(n);
  Rng r{seed ^ 0xA217Bull};
  std::vector<json> rows;
  for (int64_t i = 0; i < n; ++i) {
    const Sum s = draw_sum(r, split);
    rows.push_back({{"question", s.question()},
                    {"answer", std::to_string(s.result())},
                    {"op", std::string(1, s.op)},
                    {"digits", s.digits()}});
  }
  return to_lines(rows);
}

std::string chat_jsonl(const World& w, int64_t n, uint64_t seed, Split split) {
  check_n(n);
  Rng r{seed ^ 0xC4A7ull};
  const std::vector<const Fact*> facts = facts_of_split(w, split);
  std::vector<json> rows;
  for (int64_t i = 0; i < n; ++i) {
    json messages = json::array();
    const int turns = r.chance(65) ? 1 : r.chance(70) ? 2 : 3;
    for (int t = 0; t < turns; ++t) {
      auto [user, reply] = t > 0 && r.chance(15) ? std::pair<std::string, std::string>{std::string(r.pick(k_thanks)),
                                                                                        "You are welcome!"}
                                                 : exchange(w, r, split, facts);
      messages.push_back(message("user", user));
      messages.push_back(message("assistant", reply));
    }
    rows.push_back({{"messages", messages}});
  }
  return to_lines(rows);
}

std::string prefs_jsonl(const World& w, int64_t n, uint64_t seed, Split split, PrefsKnowledge knowledge) {
  check_n(n);
  Rng r{seed ^ 0x9EF5ull};
  const bool eval = split == Split::Eval;
  const PrefsKnowledge k = eval ? knowledge : PrefsKnowledge::Known;
  // Evasion and rudeness pairs ask anything of the split; the right-vs-wrong pairs ask what `k` allows, with
  // the wrong answers of their side.
  const std::vector<const Fact*> facts = facts_of_split(w, split);
  std::vector<const Fact*> right_wrong_facts;
  std::vector<std::vector<std::string>> wrong_of;  // parallel to right_wrong_facts
  for (const Fact& f : w.facts) {
    const bool fits = k == PrefsKnowledge::All ? eval || f.seen : k == PrefsKnowledge::Unseen ? !f.seen : f.seen;
    if (!fits) continue;
    std::vector<std::string> wrong = wrong_keys(w, f, k == PrefsKnowledge::Known ? std::optional<Split>(split)
                                                                                  : std::nullopt);
    if (wrong.empty()) continue;
    right_wrong_facts.push_back(&f);
    wrong_of.push_back(std::move(wrong));
  }
  const auto right_wrong_sum = [&]() {
    for (;;) {
      const Sum s = draw_sum(r, split);
      if (k == PrefsKnowledge::All || !eval || is_known_sum(s) == (k == PrefsKnowledge::Known)) return s;
    }
  };
  std::vector<json> rows;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t drawn = r.below(3);  // drawn in every mode, so the modes share the rest of the stream
    const uint64_t kind = k == PrefsKnowledge::Unseen ? 0 : drawn;
    const bool ask_sum = r.chance(50);
    std::string prompt, answer, wrong;
    if (ask_sum) {
      const Sum s = kind == 0 ? right_wrong_sum() : draw_sum(r, split);
      prompt = s.question();
      answer = s.worked();
      const int64_t delta = static_cast<int64_t>(1 + r.below(9));
      wrong = s.worked_with(s.result() + (r.below(2) || s.result() < delta ? delta : -delta));
    } else if (kind == 0) {
      // The same relation of another character: a fluent, wrong answer.
      const size_t at = r.below(right_wrong_facts.size());
      const Fact& f = *right_wrong_facts[at];
      prompt = f.question;
      answer = f.answer;
      wrong = answer_with_key(w, f, wrong_of[at][r.below(wrong_of[at].size())]);
    } else {
      const Fact& f = *facts[r.below(facts.size())];
      prompt = f.question;
      answer = f.answer;
    }
    json row = {{"prompt", prompt}};
    if (kind == 0) {
      row["chosen"] = answer;
      row["rejected"] = wrong;
      row["kind"] = k == PrefsKnowledge::Unseen ? "correct_unseen" : "correct";
    } else if (kind == 1) {
      row["chosen"] = answer;
      row["rejected"] = r.below(2) ? "I do not want to talk about that." : "Let us talk about something else.";
      row["kind"] = "on_topic";
    } else {
      row["chosen"] = answer;
      row["rejected"] = (r.below(2) ? "That is a silly question. " : "Ugh, fine. ") + answer;
      row["kind"] = "polite";
    }
    rows.push_back(std::move(row));
  }
  return to_lines(rows);
}

std::string prompts_jsonl(const World& w, int64_t n, uint64_t seed, Split split) {
  check_n(n);
  Rng r{seed ^ 0x960A1ull};
  const std::vector<const Fact*> facts = facts_of_split(w, split);
  std::vector<json> rows;
  for (int64_t i = 0; i < n; ++i) {
    if (r.chance(60)) {
      const Sum s = draw_sum(r, split);
      rows.push_back({{"prompt", s.question()}, {"answer", std::to_string(s.result())}, {"kind", "arith"}});
    } else {
      const Fact& f = *facts[r.below(facts.size())];
      rows.push_back({{"prompt", f.question}, {"answer", f.key}, {"kind", "facts"}});
    }
  }
  return to_lines(rows);
}

}  // namespace engine::world
