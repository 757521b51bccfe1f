// viridis(): see engine/inspect/colormap.h.
#include "engine/inspect/colormap.h"

#include <cmath>

namespace engine {

namespace {

// matplotlib viridis at t = i/8 (its standard hex stops #440154 ... #fde725).
constexpr Rgb kStops[9] = {{68, 1, 84},    {71, 45, 123}, {59, 82, 139},  {44, 114, 142}, {33, 145, 140},
                           {40, 174, 128}, {94, 201, 98}, {173, 220, 48}, {253, 231, 37}};

uint8_t lerp(uint8_t a, uint8_t b, float f) {
  return static_cast<uint8_t>(std::lround(static_cast<float>(a) + (static_cast<float>(b) - static_cast<float>(a)) * f));
}

}  // namespace

Rgb viridis(float t) {
  if (!(t > 0.0f)) return kStops[0];  // also NaN
  if (t >= 1.0f) return kStops[8];
  const float x = t * 8.0f;
  const int i = static_cast<int>(x);
  const float f = x - static_cast<float>(i);
  return {lerp(kStops[i].r, kStops[i + 1].r, f), lerp(kStops[i].g, kStops[i + 1].g, f),
          lerp(kStops[i].b, kStops[i + 1].b, f)};
}

}  // namespace engine
