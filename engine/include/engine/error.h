// engine::Error — the one exception type the engine throws.
//
// Library code never calls exit()/abort(): every failure (bad file, bad argument, out of memory for a
// requested size) becomes an Error whose message names what failed and where, e.g.
// "model.safetensors: tensor 'h.0.attn.c_attn.weight': data_offsets [10, 4] end before begin".
#pragma once

#include <stdexcept>
#include <string>

namespace engine {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace engine
