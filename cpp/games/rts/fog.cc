#include "games/rts/fog.h"

#include <algorithm>

namespace elf::minirts {

void Fog::Reset() {
  std::fill(visible_.begin(), visible_.end(), 0);
  std::fill(seen_.begin(), seen_.end(), 0);
}

void Fog::Update(const World& world) {
  std::fill(visible_.begin(), visible_.end(), 0);
  const int n = size_;
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (!u.Alive()) continue;
    const int sight_sq = StatsOf(u.type).sight_sq;
    int r = 0;
    while ((r + 1) * (r + 1) <= sight_sq) ++r;
    uint8_t* visible = &visible_[Offset(u.player)];
    uint8_t* seen = &seen_[Offset(u.player)];
    const int y0 = std::max(0, u.y - r), y1 = std::min(n - 1, u.y + r);
    const int x0 = std::max(0, u.x - r), x1 = std::min(n - 1, u.x + r);
    for (int y = y0; y <= y1; ++y) {
      const int dy = y - u.y;
      for (int x = x0; x <= x1; ++x) {
        const int dx = x - u.x;
        if (dx * dx + dy * dy > sight_sq) continue;
        visible[y * n + x] = 1;
        seen[y * n + x] = 1;
      }
    }
  }
}

}  // namespace elf::minirts
