// Unicode character classes for the pre-tokenizer: letter (\p{L}), number (\p{N}), space (\s) or other.
//
// The range table is generated (tests/tools/gen_unicode_tables.py) from the same Unicode version the
// reference tokenizer uses, and tests/tools/check_unicode_tables.py verifies every code point against
// it. Invariant: k_code_point_ranges is sorted by `first`, ranges do not overlap, and a code point in
// no range is CharClass::other. ASCII is answered from a small table because almost all text is ASCII.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace engine::tokenizer {

enum class CharClass : uint8_t { other = 0, letter = 1, number = 2, space = 3 };

struct CodePointRange {
  uint32_t first;
  uint32_t last;  // inclusive
  CharClass cls;
};

extern const char k_unicode_version[];
extern const CodePointRange k_code_point_ranges[];
extern const std::size_t k_code_point_range_count;

namespace detail {
constexpr CharClass ascii_class(uint32_t c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return CharClass::letter;
  if (c >= '0' && c <= '9') return CharClass::number;
  if (c == ' ' || (c >= 0x09 && c <= 0x0D)) return CharClass::space;
  return CharClass::other;
}
}  // namespace detail

inline CharClass char_class(uint32_t cp) {
  if (cp < 0x80) return detail::ascii_class(cp);
  const CodePointRange* begin = k_code_point_ranges;
  const CodePointRange* end = k_code_point_ranges + k_code_point_range_count;
  // First range whose last >= cp; cp is in it only if first <= cp.
  const CodePointRange* it =
      std::lower_bound(begin, end, cp, [](const CodePointRange& r, uint32_t v) { return r.last < v; });
  if (it != end && it->first <= cp) return it->cls;
  return CharClass::other;
}

}  // namespace engine::tokenizer
