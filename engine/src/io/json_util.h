// Checked JSON parsing and typed field access for every JSON file the engine reads
// (safetensors headers, HF config.json, tokenizer.json, workbench.json).
//
// Invariants of a value returned by parse_json_checked:
//   - the text was valid UTF-8 (checked by us, before nlohmann sees it, so the error can name the byte);
//   - no object anywhere holds the same key twice (nlohmann alone keeps the last one, Python keeps
//     the last one, the safetensors reference rejects: a parser differential, reliability.md §1.5);
//   - containers nest at most `max_depth` deep, so later recursive walks (dump, copy, our own code)
//     cannot overflow the stack, and a 100k-deep "[[[[..." is rejected in one linear scan;
//   - numbers are finite (NaN/Infinity literals are not JSON; 1e400 is refused as an overflow);
//   - nothing but whitespace follows the top-level value.
// The getters turn "wrong type / out of range / missing" into one engine::Error sentence naming the
// label, the field and what was found, e.g.
//   config.json: field 'n_embd' must be an integer in [1, 65536], got "abc"
// Optional getters treat an absent field and an explicit null the same (HF configs write
// "sliding_window": null for "not set").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace engine::io {

using json = nlohmann::json;

// Byte offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629:
// no overlongs, no surrogates, nothing above U+10FFFF), or nullopt if `text` is valid.
std::optional<size_t> find_invalid_utf8(std::string_view text);

// Parses `text` as one JSON value with the invariants above. Errors read
// "<label>: <what> at byte <base_offset + offset> ...". `base_offset` lets a caller whose JSON sits
// inside a larger file (a safetensors header starts at byte 8) report file offsets.
json parse_json_checked(std::string_view text, const std::string& label, int max_depth = 64, uint64_t base_offset = 0);

// Reads a whole file (refusing files larger than max_bytes before reading them) and parses it.
// The label in errors is the path.
json parse_json_file(const std::string& path, uint64_t max_bytes = 64ull << 20, int max_depth = 64);

// A short, single-line rendering of a value for "got ..." in error messages (truncated to ~60 chars).
std::string json_describe(const json& value);

// --- value checks: `what` names the value ("field 'n_embd'", "shape[2]"), label the file. ----------
int64_t json_as_int(const json& value, const std::string& label, std::string_view what, int64_t min, int64_t max);
uint64_t json_as_uint(const json& value, const std::string& label, std::string_view what, uint64_t min, uint64_t max);
double json_as_number(const json& value, const std::string& label, std::string_view what, double min, double max);
std::string json_as_string(const json& value, const std::string& label, std::string_view what,
                           size_t max_bytes = 1u << 20);
bool json_as_bool(const json& value, const std::string& label, std::string_view what);

// --- object fields. `obj` must be an object (else an error naming the field looked for). ------------
// Returns nullptr when the key is absent (null counts as present here).
const json* json_find(const json& obj, std::string_view key, const std::string& label);
// The field's value; an error if absent.
const json& json_require(const json& obj, std::string_view key, const std::string& label);

int64_t json_get_int(const json& obj, std::string_view key, const std::string& label, int64_t min, int64_t max);
std::optional<int64_t> json_get_int_opt(const json& obj, std::string_view key, const std::string& label, int64_t min,
                                        int64_t max);
uint64_t json_get_uint(const json& obj, std::string_view key, const std::string& label, uint64_t min, uint64_t max);
std::optional<uint64_t> json_get_uint_opt(const json& obj, std::string_view key, const std::string& label, uint64_t min,
                                          uint64_t max);
double json_get_number(const json& obj, std::string_view key, const std::string& label, double min, double max);
std::optional<double> json_get_number_opt(const json& obj, std::string_view key, const std::string& label, double min,
                                          double max);
std::string json_get_string(const json& obj, std::string_view key, const std::string& label,
                            size_t max_bytes = 1u << 20);
std::optional<std::string> json_get_string_opt(const json& obj, std::string_view key, const std::string& label,
                                               size_t max_bytes = 1u << 20);
bool json_get_bool(const json& obj, std::string_view key, const std::string& label);
std::optional<bool> json_get_bool_opt(const json& obj, std::string_view key, const std::string& label);
// Containers: the value itself, checked for kind (absent -> error; the _opt forms return nullptr
// for absent or null).
const json& json_get_object(const json& obj, std::string_view key, const std::string& label);
const json* json_get_object_opt(const json& obj, std::string_view key, const std::string& label);
const json& json_get_array(const json& obj, std::string_view key, const std::string& label);
const json* json_get_array_opt(const json& obj, std::string_view key, const std::string& label);

}  // namespace engine::io
