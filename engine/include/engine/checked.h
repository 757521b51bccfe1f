// Overflow-checked integer arithmetic for parsers.
//
// Every count, length, shape product and offset read from a file goes through these helpers, so a
// crafted header can never wrap an allocation size or a bounds check (the bug class behind most GGUF
// CVEs: each individual value checked, the sum or product not). They throw engine::Error with the
// caller's context string.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "engine/error.h"

namespace engine {

inline uint64_t checked_add(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw Error(std::string(what) + ": integer overflow in addition");
  return r;
}

inline uint64_t checked_mul(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(std::string(what) + ": integer overflow in multiplication");
  return r;
}

// Rounds `value` up to a multiple of `alignment` (a power of two), refusing to wrap.
inline uint64_t checked_align_up(uint64_t value, uint64_t alignment, const char* what) {
  const uint64_t mask = alignment - 1;
  return checked_add(value, mask, what) & ~mask;
}

// Narrows to a smaller integer type, refusing values that do not fit.
template <typename To, typename From>
To checked_cast(From v, const char* what) {
  if (v < 0 && !std::numeric_limits<To>::is_signed) throw Error(std::string(what) + ": negative value");
  if (static_cast<std::make_unsigned_t<From>>(v < 0 ? 0 : v) >
      static_cast<std::make_unsigned_t<To>>(std::numeric_limits<To>::max()))
    throw Error(std::string(what) + ": value out of range");
  if constexpr (std::numeric_limits<To>::is_signed && std::numeric_limits<From>::is_signed) {
    if (v < std::numeric_limits<To>::min()) throw Error(std::string(what) + ": value out of range");
  }
  return static_cast<To>(v);
}

}  // namespace engine
