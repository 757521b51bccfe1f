// What one generation request can set, described once.
//
// GenerationSettings holds the knobs as people give them (a seed of -1 for "pick one", stop strings,
// a logit-bias text, how many alternatives to report); kGenerationSettingFields lists each of them
// with its JSON / QML key, its CLI flag, its kind, the range it accepts and a short label. Everything
// else is derived from that one table: the CLI's `generate` flags (their defaults, ranges and --help
// lines), the map QML reads and writes, the JSON stored with a chat reply, and the engine's
// GenerateParams / SamplerParams (to_generate_params). A new knob is one member here and one row in
// generation_settings.cpp.
//
// The defaults are the member initializers below and nowhere else; they equal SamplerParams' defaults
// (tests check it). The CLI reports no alternatives unless asked (its JSON changes shape with them),
// so top_logprobs defaults to 0; a view that shows alternatives asks for them explicitly.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/generator.h"

namespace engine {

struct GenerationSettings {
  int64_t max_tokens = 128;
  double temperature = 0.8;        // <= 0: greedy
  int64_t top_k = 40;              // <= 0: off
  double top_p = 0.95;             // >= 1: off
  double min_p = 0.05;             // <= 0: off
  double repeat_penalty = 1.0;     // 1: off
  int64_t repeat_last_n = 64;      // penalty window in tokens; 0: off, -1: whole history
  double frequency_penalty = 0.0;  // 0: off
  double presence_penalty = 0.0;   // 0: off
  // One "id:bias" or "text:bias" per line (the app's form; text keys need the tokenizer, so the
  // caller turns it into SamplerParams::logit_bias).
  std::string logit_bias;
  int64_t seed = -1;              // < 0: a fresh random seed per request
  std::vector<std::string> stop;  // generation ends before the first of these that appears
  int64_t top_logprobs = 0;       // alternatives reported per generated token (0: none)
};

enum class SettingKind {
  Integer,   // an int64_t member
  Real,      // a double member
  Text,      // a std::string member
  TextList,  // a std::vector<std::string> member; one line each where text is typed
};

struct GenerationSettingField {
  const char* key;   // JSON / QML key, e.g. "topK" (stored in databases: never rename)
  const char* flag;  // CLI flag without "--", e.g. "top-k" (DESIGN.md §5: never rename)
  SettingKind kind;
  // Exactly one of these is set, matching `kind`.
  int64_t GenerationSettings::*integer = nullptr;
  double GenerationSettings::*real = nullptr;
  std::string GenerationSettings::*text = nullptr;
  std::vector<std::string> GenerationSettings::*text_list = nullptr;
  // Accepted range (numbers only): the CLI refuses values outside it, maps are clamped into it.
  double min = 0, max = 0;
  // The range and step a slider or spin box offers: the useful part of the accepted range.
  double ui_min = 0, ui_max = 0, ui_step = 1;
  const char* label = "";  // short name, e.g. "Top-k"
  const char* help = "";   // one line for --help, without the default (appended from the struct)
  // Part of the JSON stored with a chat reply: the sampling numbers shown beside it (with the seed
  // it used). Replies in existing databases carry exactly these keys.
  bool stored_with_reply = false;
  // Instead of the default value in --help (e.g. the seed's "random"); nullptr: the value itself.
  const char* default_text = nullptr;
};

// Every field, in the order of the CLI's --help.
std::span<const GenerationSettingField> generation_setting_fields();
// The field with this key or flag; nullptr when there is none.
const GenerationSettingField* find_generation_setting(const std::string& key_or_flag);

// An Integer field's accepted range as integers (exact, unlike min/max for the seed's 2^63 - 1).
int64_t integer_min(const GenerationSettingField& field);
int64_t integer_max(const GenerationSettingField& field);
// A number field's value as a double (for Integer fields exact up to 2^53). 0 for other kinds.
double setting_number(const GenerationSettings& s, const GenerationSettingField& field);
// Sets a number field, clamped into its accepted range (integers rounded toward zero first).
void set_setting_number(GenerationSettings& s, const GenerationSettingField& field, double value);
// Every number field clamped into its accepted range.
GenerationSettings clamped(GenerationSettings s);
// The default as --help shows it: "0.8", "40", or default_text when the field has one.
std::string setting_default_text(const GenerationSettingField& field);

// The engine's parameters for `s` (clamped first). A negative seed becomes `random_seed`.
// logit_bias is left empty: its text form needs the model's tokenizer, so the caller fills it.
GenerateParams to_generate_params(const GenerationSettings& s, uint64_t random_seed);

}  // namespace engine
