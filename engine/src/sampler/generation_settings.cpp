// The generation settings' field table (see engine/generation_settings.h).
#include "engine/generation_settings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace engine {

namespace {

using S = GenerationSettings;

constexpr double kMaxSeed = static_cast<double>(std::numeric_limits<int64_t>::max());

GenerationSettingField integer(const char* key, const char* flag, int64_t S::*member, double min, double max,
                               double ui_min, double ui_max, double ui_step, const char* label, const char* help,
                               bool stored = true) {
  GenerationSettingField f{key, flag, SettingKind::Integer};
  f.integer = member;
  f.min = min, f.max = max, f.ui_min = ui_min, f.ui_max = ui_max, f.ui_step = ui_step;
  f.label = label, f.help = help, f.stored_with_reply = stored;
  return f;
}

GenerationSettingField real(const char* key, const char* flag, double S::*member, double min, double max, double ui_min,
                            double ui_max, double ui_step, const char* label, const char* help) {
  GenerationSettingField f{key, flag, SettingKind::Real};
  f.real = member;
  f.min = min, f.max = max, f.ui_min = ui_min, f.ui_max = ui_max, f.ui_step = ui_step;
  f.label = label, f.help = help, f.stored_with_reply = true;
  return f;
}

// The accepted ranges are what the engine can run; the UI ranges are where the sliders are useful
// (a temperature of 50 is legal, but a slider to 100 would leave the interesting part a few pixels).
const std::vector<GenerationSettingField>& table() {
  static const std::vector<GenerationSettingField> fields = [] {
    std::vector<GenerationSettingField> t = {
        integer("maxTokens", "max-tokens", &S::max_tokens, 0, 1 << 20, 1, 4096, 16, "Max tokens",
                "most tokens to generate"),
        real("temperature", "temperature", &S::temperature, 0, 100, 0, 2, 0.05, "Temperature",
             "sampling temperature, 0 = greedy"),
        integer("topK", "top-k", &S::top_k, 0, 1 << 24, 0, 1000, 1, "Top-k", "keep the K most likely tokens, 0 = off"),
        real("topP", "top-p", &S::top_p, 0, 1, 0.05, 1, 0.01, "Top-p", "nucleus sampling threshold, 1 = off"),
        real("minP", "min-p", &S::min_p, 0, 1, 0, 1, 0.01, "Min-p",
             "drop tokens below P x the top probability, 0 = off"),
        real("repeatPenalty", "repeat-penalty", &S::repeat_penalty, 0.01, 100, 1, 2, 0.05, "Repetition penalty",
             "repetition penalty, 1 = off"),
        integer("repeatLastN", "repeat-last-n", &S::repeat_last_n, -1, 1 << 24, -1, 4096, 16, "Penalty window",
                "penalty window in tokens, -1 = all"),
        real("frequencyPenalty", "frequency-penalty", &S::frequency_penalty, -100, 100, 0, 2, 0.05, "Frequency penalty",
             "subtract count x F from repeated tokens"),
        real("presencePenalty", "presence-penalty", &S::presence_penalty, -100, 100, 0, 2, 0.05, "Presence penalty",
             "subtract P from tokens seen before"),
    };
    GenerationSettingField bias{"logitBias", "logit-bias", SettingKind::Text};
    bias.text = &S::logit_bias;
    bias.label = "Logit bias";
    bias.help = "ID=BIAS added to a token's logit (repeatable; -inf bans)";
    t.push_back(bias);

    GenerationSettingField seed =
        integer("seed", "seed", &S::seed, -1, kMaxSeed, -1, 2147483647, 1, "Seed", "random seed, -1 = random");
    seed.default_text = "random, reported in --json";
    t.push_back(seed);

    GenerationSettingField stop{"stop", "stop", SettingKind::TextList};
    stop.text_list = &S::stop;
    stop.label = "Stop strings";
    stop.help = "stop string (repeatable)";
    t.push_back(stop);

    // What is reported, not what is generated: not part of a reply's settings.
    t.push_back(integer("topLogprobs", "top-logprobs", &S::top_logprobs, 0, 100, 0, 20, 1, "Alternatives shown",
                        "report K alternatives per token", /*stored=*/false));
    return t;
  }();
  return fields;
}

}  // namespace

std::span<const GenerationSettingField> generation_setting_fields() { return table(); }

const GenerationSettingField* find_generation_setting(const std::string& key_or_flag) {
  for (const GenerationSettingField& f : table())
    if (key_or_flag == f.key || key_or_flag == f.flag) return &f;
  return nullptr;
}

double setting_number(const GenerationSettings& s, const GenerationSettingField& field) {
  if (field.integer) return static_cast<double>(s.*field.integer);
  if (field.real) return s.*field.real;
  return 0;
}

// A double cannot hold 2^63 - 1 (it rounds up to 2^63), so the top of the seed's range is special.
int64_t integer_min(const GenerationSettingField& f) { return static_cast<int64_t>(f.min); }
int64_t integer_max(const GenerationSettingField& f) {
  return f.max >= kMaxSeed ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(f.max);
}

void set_setting_number(GenerationSettings& s, const GenerationSettingField& field, double value) {
  if (std::isnan(value)) return;  // not a number: keep what is there
  if (field.integer) {
    s.*field.integer = value >= field.max   ? integer_max(field)
                       : value <= field.min ? integer_min(field)
                                            : static_cast<int64_t>(std::trunc(value));
  } else if (field.real) {
    s.*field.real = std::clamp(value, field.min, field.max);
  }
}

GenerationSettings clamped(GenerationSettings s) {
  const GenerationSettings defaults;
  for (const GenerationSettingField& f : table()) {
    if (f.integer) s.*f.integer = std::clamp(s.*f.integer, integer_min(f), integer_max(f));
    else if (f.real) s.*f.real = std::isnan(s.*f.real) ? defaults.*f.real : std::clamp(s.*f.real, f.min, f.max);
  }
  return s;
}

std::string setting_default_text(const GenerationSettingField& field) {
  if (field.default_text) return field.default_text;
  const GenerationSettings d;
  char buf[64];
  if (field.integer) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(d.*field.integer));
  else if (field.real) std::snprintf(buf, sizeof buf, "%g", d.*field.real);
  else return {};
  return buf;
}

GenerateParams to_generate_params(const GenerationSettings& settings, uint64_t random_seed) {
  const GenerationSettings s = clamped(settings);
  GenerateParams p;
  p.max_tokens = static_cast<int>(s.max_tokens);
  SamplerParams& sp = p.sampler;
  sp.temperature = static_cast<float>(s.temperature);
  sp.top_k = static_cast<int32_t>(s.top_k);
  sp.top_p = static_cast<float>(s.top_p);
  sp.min_p = static_cast<float>(s.min_p);
  sp.repeat_penalty = static_cast<float>(s.repeat_penalty);
  sp.repeat_last_n = static_cast<int32_t>(s.repeat_last_n);
  sp.frequency_penalty = static_cast<float>(s.frequency_penalty);
  sp.presence_penalty = static_cast<float>(s.presence_penalty);
  sp.seed = s.seed >= 0 ? static_cast<uint64_t>(s.seed) : random_seed;
  for (const std::string& stop : s.stop)
    if (!stop.empty()) p.stop.push_back(stop);
  p.top_logprobs = static_cast<int>(s.top_logprobs);
  return p;
}

}  // namespace engine
