#include "games/minirts/features.h"

#include <algorithm>

namespace elf::minirts {

void WriteFeatures(const World& world, const Fog& fog, int player, int max_tick, float* s, float* v) {
  const Map& map = world.map();
  const int n = map.size(), area = n * n;
  std::fill(s, s + kNumPlanes * area, 0.0f);
  std::fill(v, v + kNumScalars, 0.0f);
  // Feature index of tile (x, y) for this player.
  auto at = [&](int x, int y) { return player == 0 ? y * n + x : (n - 1 - y) * n + (n - 1 - x); };
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      const int i = at(x, y);
      const uint8_t terrain = map.terrain(x, y);
      if (terrain == kRock) s[kPlaneRock * area + i] = 1.0f;
      if (terrain == kMine) s[kPlaneResources * area + i] = map.resources(x, y) * (1.0f / kMineAmount);
      if (fog.Visible(player, x, y)) s[kPlaneVisible * area + i] = 1.0f;
      if (fog.Seen(player, x, y)) s[kPlaneSeen * area + i] = 1.0f;
    }
  }
  for (int slot = 0; slot < world.end(); ++slot) {
    const Unit& u = world.unit(slot);
    if (!u.Alive()) continue;
    const bool own = u.player == player;
    if (!own && !fog.Visible(player, u.x, u.y)) continue;
    const int i = at(u.x, u.y);
    const float hp = static_cast<float>(u.hp) / StatsOf(u.type).hp;
    s[((own ? kPlaneOwn : kPlaneEnemy) + u.type) * area + i] = 1.0f;
    s[kPlaneHp * area + i] = hp;
    v[(own ? kScalarOwnCounts : kScalarEnemyCounts) + u.type] += 0.1f;
    if (u.type == kBase) v[own ? kScalarBaseHp : kScalarEnemyBaseHp] = hp;
  }
  v[kScalarResources] = world.resources(player) * 0.01f;
  v[kScalarTick] = static_cast<float>(world.tick()) / max_tick;
}

}  // namespace elf::minirts
