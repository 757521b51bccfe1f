// The Unicode data of NFC (generated into nfc_tables.cpp by tests/tools/gen_nfc_tables.py).
#pragma once

#include <cstddef>
#include <cstdint>

namespace engine::tokenizer::nfc_data {

struct CombiningRange {
  uint32_t first, last;
  uint8_t ccc;  // canonical combining class, 1..254
};
struct Decomposition {
  uint32_t cp, first, second;  // second == 0: a singleton
};
struct Composition {
  uint32_t first, second, composite;
};

extern const char k_unicode_version[];
extern const CombiningRange k_combining[];
extern const std::size_t k_combining_count;
extern const Decomposition k_decompositions[];
extern const std::size_t k_decomposition_count;
extern const Composition k_compositions[];
extern const std::size_t k_composition_count;

}  // namespace engine::tokenizer::nfc_data
