// JSON parsing for tokenizer files, hardened against hostile input.
//
// Tokenizer files come from the internet and count as parser attack surface (reliability.md §1.6-1.7,
// cases 24-25). nlohmann/json does the lexing; on top of it this parser
//   * refuses nesting deeper than k_max_json_depth (no legitimate tokenizer file nests beyond ~6),
//   * refuses duplicate keys in any object (nlohmann would silently keep the last one, which turns
//     "duplicate token in vocab.json" into a silently different vocabulary),
//   * turns every parse failure into engine::Error naming the source file.
// A UTF-8 byte-order mark at the start is accepted; invalid UTF-8 and lone surrogate escapes inside
// strings are rejected by the lexer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace engine::tokenizer {

inline constexpr int k_max_json_depth = 64;

// `source` names the file in error messages ("vocab.json", or a path).
nlohmann::json parse_guarded_json(std::string_view text, const std::string& source);

// Short printable rendering of an arbitrary string for error messages: quoted, control and non-UTF-8
// bytes as \xNN, cut after about 60 bytes.
std::string quote_for_message(std::string_view s);

// Type name of a JSON value for "expected X, got Y" messages.
std::string json_type_name(const nlohmann::json& j);

}  // namespace engine::tokenizer
