// NFC: decompose, order, compose (see nfc.h; the algorithm is UAX #15's, section by section).
#include "tokenizer/nfc.h"

#include <algorithm>

#include "tokenizer/nfc_tables.h"
#include "tokenizer/utf8.h"

namespace engine::tokenizer {
namespace {

using namespace nfc_data;

// Hangul (UAX #15 §3.12): syllables are L V [T] jamo sequences, decomposed and composed by arithmetic.
constexpr uint32_t k_s_base = 0xAC00, k_l_base = 0x1100, k_v_base = 0x1161, k_t_base = 0x11A7;
constexpr uint32_t k_l_count = 19, k_v_count = 21, k_t_count = 28, k_n_count = k_v_count * k_t_count,
                   k_s_count = k_l_count * k_n_count;

// An invalid input byte travels as a code point outside Unicode, so it neither decomposes nor composes.
constexpr uint32_t k_raw_byte = 0x80000000u;

struct Char {
  uint32_t cp;
  std::size_t source;  // offset of the input byte the character came from
};

uint8_t ccc(uint32_t cp) {
  const CombiningRange* end = k_combining + k_combining_count;
  const CombiningRange* it =
      std::upper_bound(k_combining, end, cp, [](uint32_t v, const CombiningRange& r) { return v < r.first; });
  if (it == k_combining) return 0;
  --it;
  return cp <= it->last ? it->ccc : 0;
}

void decompose(uint32_t cp, std::size_t source, std::vector<Char>& out) {
  if (cp >= k_s_base && cp < k_s_base + k_s_count) {
    const uint32_t s = cp - k_s_base;
    out.push_back({k_l_base + s / k_n_count, source});
    out.push_back({k_v_base + (s % k_n_count) / k_t_count, source});
    if (s % k_t_count) out.push_back({k_t_base + s % k_t_count, source});
    return;
  }
  const Decomposition* end = k_decompositions + k_decomposition_count;
  const Decomposition* it =
      std::lower_bound(k_decompositions, end, cp, [](const Decomposition& d, uint32_t v) { return d.cp < v; });
  if (it == end || it->cp != cp) {
    out.push_back({cp, source});
    return;
  }
  decompose(it->first, source, out);  // depth is bounded by the data (at most 4 levels)
  if (it->second) decompose(it->second, source, out);
}

// The primary composite of (a, b), or 0.
uint32_t compose(uint32_t a, uint32_t b) {
  if (a >= k_l_base && a < k_l_base + k_l_count && b >= k_v_base && b < k_v_base + k_v_count)
    return k_s_base + ((a - k_l_base) * k_v_count + (b - k_v_base)) * k_t_count;
  if (a >= k_s_base && a < k_s_base + k_s_count && (a - k_s_base) % k_t_count == 0 && b > k_t_base &&
      b < k_t_base + k_t_count)
    return a + (b - k_t_base);
  const Composition* end = k_compositions + k_composition_count;
  const Composition* it = std::lower_bound(k_compositions, end, std::pair<uint32_t, uint32_t>{a, b},
                                           [](const Composition& c, const std::pair<uint32_t, uint32_t>& v) {
                                             return c.first != v.first ? c.first < v.first : c.second < v.second;
                                           });
  return (it != end && it->first == a && it->second == b) ? it->composite : 0;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp & k_raw_byte) {
    out += static_cast<char>(cp & 0xFF);
  } else if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::string nfc(std::string_view text, std::vector<std::size_t>* source) {
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    if (source) {
      source->resize(text.size());
      for (std::size_t i = 0; i < text.size(); ++i) (*source)[i] = i;
    }
    return std::string(text);
  }
  // 1. Full canonical decomposition.
  std::vector<Char> chars;
  chars.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Char c = decode_utf8(p + i, text.size() - i);
    if (c.code_point == k_invalid_code_point) chars.push_back({k_raw_byte | p[i], i});
    else decompose(c.code_point, i, chars);
    i += c.length;
  }
  // 2. Canonical ordering: each run of non-starters sorted by combining class, stably.
  for (std::size_t i = 0; i < chars.size();) {
    if ((chars[i].cp & k_raw_byte) || ccc(chars[i].cp) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < chars.size() && !(chars[j].cp & k_raw_byte) && ccc(chars[j].cp) != 0) ++j;
    std::stable_sort(chars.begin() + static_cast<std::ptrdiff_t>(i), chars.begin() + static_cast<std::ptrdiff_t>(j),
                     [](const Char& a, const Char& b) { return ccc(a.cp) < ccc(b.cp); });
    i = j;
  }
  // 3. Canonical composition: a character joins the last starter unless something between them
  // blocks it (a starter, or a mark of the same or a higher class).
  std::vector<Char> out;
  out.reserve(chars.size());
  constexpr std::size_t k_none = static_cast<std::size_t>(-1);
  std::size_t starter = k_none;
  uint8_t last_class = 0;  // class of the last character kept after the starter
  for (const Char& c : chars) {
    const uint8_t cc = (c.cp & k_raw_byte) ? 0 : ccc(c.cp);
    if (starter != k_none && !(c.cp & k_raw_byte) && !(out[starter].cp & k_raw_byte)) {
      const bool adjacent = out.size() - 1 == starter;
      if (adjacent || (last_class != 0 && last_class < cc)) {
        if (const uint32_t composite = compose(out[starter].cp, c.cp)) {
          out[starter].cp = composite;
          continue;
        }
      }
    }
    if (cc == 0) {
      starter = out.size();
      last_class = 0;
    } else {
      last_class = cc;
    }
    out.push_back(c);
  }
  std::string result;
  result.reserve(text.size());
  if (source) source->clear();
  for (const Char& c : out) {
    const std::size_t before = result.size();
    append_utf8(result, c.cp);
    if (source) source->insert(source->end(), result.size() - before, c.source);
  }
  return result;
}

}  // namespace engine::tokenizer
