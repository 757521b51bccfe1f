// Synthetic training text written by our own code: short, simple English stories (TinyStories-like
// in spirit, generated from a small grammar), so the starter model can be pretrained with nothing
// downloaded.
//
// Invariants: the output is a pure function of (n, seed) on every platform (our splitmix64, no std::
// distributions); it is ASCII; stories are separated by one blank line and contain none themselves.
#pragma once

#include <cstdint>
#include <string>

namespace engine {

// `n` stories (n >= 0), each 5-9 sentences.
std::string synth_stories(int64_t n, uint64_t seed);

}  // namespace engine
