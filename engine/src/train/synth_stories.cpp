// synth_stories: see engine/train/synth_stories.h. A story is a fixed arc -- introduction, a find or a
// problem, a try, a turn, an ending -- each slot filled from small word lists, so a tiny model can learn
// its structure and agreement (names and pronouns stay consistent within a story).
#include "engine/train/synth_stories.h"

#include <array>
#include <string_view>
#include <vector>

#include "engine/train/data_loader.h"

namespace engine {

namespace {

struct Rng {
  uint64_t state;
  // Uniform in [0, n): the small modulo bias of 64-bit draws over lists this short is irrelevant here.
  size_t below(size_t n) { return size_t(splitmix64_next(state) % n); }
  template <size_t N>
  std::string_view pick(const std::array<std::string_view, N>& a) {
    return a[below(N)];
  }
  bool coin() { return below(2) == 0; }
};

struct Character {
  std::string_view name, kind;
  bool she;
};

constexpr std::array<std::string_view, 12> kGirls = {"Lily", "Mia", "Sara", "Ana",  "Emma", "Zoe",
                                                     "Lucy", "Amy", "Nora", "Ella", "Ruby", "Kim"};
constexpr std::array<std::string_view, 12> kBoys = {"Tom", "Max", "Ben",  "Leo",  "Sam",  "Jack",
                                                    "Tim", "Dan", "Finn", "Owen", "Noah", "Eli"};
constexpr std::array<std::string_view, 10> kKinds = {"girl", "boy",  "cat", "dog",   "bunny",
                                                     "bird", "bear", "fox", "mouse", "duck"};
constexpr std::array<std::string_view, 10> kAdjectives = {"little", "happy", "brave", "kind",  "curious",
                                                          "shy",    "small", "funny", "quiet", "clever"};
constexpr std::array<std::string_view, 10> kPlaces = {"in a small house", "near a big forest", "by the sea",
                                                      "on a green hill",  "in a busy town",    "next to a river",
                                                      "on a farm",        "in a cozy den",     "under an old tree",
                                                      "in a sunny garden"};
constexpr std::array<std::string_view, 12> kObjects = {"red ball",     "shiny key",   "blue box",    "old map",
                                                       "soft blanket", "yellow kite", "tiny boat",   "big drum",
                                                       "green hat",    "magic stone", "little bell", "paper star"};
constexpr std::array<std::string_view, 8> kFeelings = {"happy", "surprised", "excited", "curious",
                                                       "proud", "glad",      "amazed",  "joyful"};
constexpr std::array<std::string_view, 8> kProblems =
    {"it started to rain",     "the wind blew very hard", "it got dark",        "a tall fence was in the way",
     "the path was very long", "a river was too wide",    "the door was stuck", "a branch fell down"};
constexpr std::array<std::string_view, 8> kFriends = {"a wise owl",       "a kind frog",       "an old turtle",
                                                      "a friendly horse", "a little squirrel", "a happy pig",
                                                      "a big cow",        "a tiny ant"};
constexpr std::array<std::string_view, 8> kGoals = {"show it to mom",       "share it with a friend",  "take it home",
                                                    "play with it all day", "find where it came from", "keep it safe",
                                                    "give it to grandma",   "show it to everyone"};
constexpr std::array<std::string_view, 6> kMorals = {"Sharing makes everyone happy.",
                                                     "Friends help each other.",
                                                     "It is good to be brave.",
                                                     "Being kind is the best thing.",
                                                     "Never give up.",
                                                     "Every day can bring a surprise."};

std::string cap(std::string_view s) {
  std::string r(s);
  if (!r.empty() && r[0] >= 'a' && r[0] <= 'z') r[0] = char(r[0] - 'a' + 'A');
  return r;
}

void one_story(Rng& r, std::string& out) {
  Character c;
  c.she = r.coin();
  c.name = c.she ? r.pick(kGirls) : r.pick(kBoys);
  c.kind = r.pick(kKinds);
  if (c.kind == "girl" || c.kind == "boy") c.kind = c.she ? "girl" : "boy";
  const std::string he = c.she ? "she" : "he", his = c.she ? "her" : "his", him = c.she ? "her" : "him";
  const std::string_view object = r.pick(kObjects), friend_ = r.pick(kFriends);
  const std::string adj(r.pick(kAdjectives));
  const std::string a_adj =
      (adj[0] == 'a' || adj[0] == 'e' || adj[0] == 'i' || adj[0] == 'o' || adj[0] == 'u' ? "an " : "a ") + adj;
  std::string n(c.name);

  switch (r.below(3)) {
    case 0: out += "Once upon a time, there was " + a_adj + " " + std::string(c.kind) + " named " + n + ". "; break;
    case 1: out += "One day, " + a_adj + " " + std::string(c.kind) + " named " + n + " went for a walk. "; break;
    default: out += n + " was " + a_adj + " " + std::string(c.kind) + ". "; break;
  }
  out += cap(he) + " lived " + std::string(r.pick(kPlaces)) + ". ";
  out += n + " found a " + std::string(object) + ". " + cap(he) + " was very " + std::string(r.pick(kFeelings)) + ". ";
  out += n + " wanted to " + std::string(r.pick(kGoals)) + ". ";
  if (r.coin()) {
    out += "But " + std::string(r.pick(kProblems)) + ". " + n + " was sad. ";
    out += "Then " + std::string(friend_) + " came and helped " + him + ". ";
    out += n + " said, \"Thank you!\" ";
  } else {
    out += "On the way, " + he + " met " + std::string(friend_) + ". ";
    out += "They played with the " + std::string(object) + " together. ";
  }
  switch (r.below(3)) {
    case 0: out += "In the end, " + n + " went home with " + his + " " + std::string(object) + ". "; break;
    case 1: out += "At night, " + n + " went to sleep with a big smile. "; break;
    default: out += "From that day on, " + n + " and " + his + " new friend were always together. "; break;
  }
  out += std::string(r.pick(kMorals));
}

}  // namespace

std::string synth_stories(int64_t n, uint64_t seed) {
  Rng r{seed ^ 0x5EED5700D1E5ull};
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += "\n\n";
    one_story(r, out);
  }
  if (n > 0) out += "\n";
  return out;
}

}  // namespace engine
