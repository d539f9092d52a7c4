// MiniRTS fog of war: which tiles each player sees now (within the sight
// radius of one of its units or buildings) and which it has ever seen.
// Update() is called when observations are written (every frame_skip
// ticks), so "ever seen" accumulates what was visible at those moments.
#pragma once

#include <cstdint>
#include <vector>

#include "games/rts/world.h"

namespace elf::minirts {

class Fog {
 public:
  explicit Fog(int size) : size_(size), visible_(2 * size * size), seen_(2 * size * size) {}

  void Reset();
  void Update(const World& world);

  bool Visible(int player, int x, int y) const { return visible_[Offset(player) + y * size_ + x] != 0; }
  bool Seen(int player, int x, int y) const { return seen_[Offset(player) + y * size_ + x] != 0; }

 private:
  int Offset(int player) const { return player * size_ * size_; }

  int size_;
  std::vector<uint8_t> visible_;
  std::vector<uint8_t> seen_;
};

}  // namespace elf::minirts
