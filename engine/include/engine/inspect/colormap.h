// The colour scale of every heatmap (attention, lens, CLI PNGs and the app's views), so a colour
// means the same weight everywhere.
//
// Viridis (matplotlib's default: perceptually uniform, readable in greyscale and by the common forms
// of colour blindness), linearly interpolated between its nine published stops at t = 0, 1/8, ..., 1.
// Input outside [0, 1] is clamped; NaN maps to t = 0.
#pragma once

#include <cstdint>

namespace engine {

struct Rgb {
  uint8_t r, g, b;
};

Rgb viridis(float t);

}  // namespace engine
