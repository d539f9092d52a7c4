#include "games/rts/features.h"

#include <algorithm>

namespace elf::minirts {

FeatureLayout LayoutOf(Variant variant) {
  switch (variant) {
    case Variant::kCaptureTheFlag: return {kNumCtfPlanes, kNumCtfScalars, kCtfPlanesHelp, kCtfScalarsHelp};
    case Variant::kTowerDefense:
      return {kNumTowerDefensePlanes, kNumTowerDefenseScalars, kTowerDefensePlanesHelp, kTowerDefenseScalarsHelp};
    default: return {kNumPlanes, kNumScalars, kPlanesHelp, kScalarsHelp};
  }
}

namespace {
float FlagState(const Flag& flag) { return flag.Carried() ? 1.0f : (flag.AtHome() ? 0.0f : 0.5f); }
}  // namespace

void WriteFeatures(const World& world, const Fog& fog, int player, int max_tick, float* s, float* v) {
  const Map& map = world.map();
  const int n = map.size(), area = n * n;
  const FeatureLayout layout = LayoutOf(world.variant());
  std::fill(s, s + layout.planes * area, 0.0f);
  std::fill(v, v + layout.scalars, 0.0f);
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
  int towers = 0;
  for (int slot = 0; slot < world.end(); ++slot) {
    const Unit& u = world.unit(slot);
    if (!u.Alive()) continue;
    const bool own = u.player == player;
    if (!own && !fog.Visible(player, u.x, u.y)) continue;
    const int i = at(u.x, u.y);
    const float hp = static_cast<float>(u.hp) / StatsOf(u.type).hp;
    s[kPlaneHp * area + i] = hp;
    if (u.type == kTower) {
      // Only tower_defense has towers, and only player 0 builds them.
      if (own && layout.planes == kNumTowerDefensePlanes) s[kPlaneOwnTower * area + i] = 1.0f;
      towers += own;
      continue;
    }
    s[((own ? kPlaneOwn : kPlaneEnemy) + u.type) * area + i] = 1.0f;
    v[(own ? kScalarOwnCounts : kScalarEnemyCounts) + u.type] += 0.1f;
    if (u.type == kBase) v[own ? kScalarBaseHp : kScalarEnemyBaseHp] = hp;
  }
  v[kScalarResources] = world.resources(player) * 0.01f;
  v[kScalarTick] = static_cast<float>(world.tick()) / max_tick;
  if (world.variant() == Variant::kCaptureTheFlag) {
    const Flag& own = world.flag(player);
    const Flag& enemy = world.flag(1 - player);
    s[kPlaneOwnFlag * area + at(own.x, own.y)] = 1.0f;
    s[kPlaneEnemyFlag * area + at(enemy.x, enemy.y)] = 1.0f;
    v[kScalarOwnFlag] = FlagState(own);
    v[kScalarEnemyFlag] = FlagState(enemy);
  } else if (world.variant() == Variant::kTowerDefense) {
    const Rules& rules = world.rules();
    v[kScalarOwnTowers] = towers * 0.1f;
    v[kScalarWaves] = static_cast<float>(world.waves_spawned()) / std::max(1, rules.waves);
    if (world.waves_spawned() < rules.waves) {
      v[kScalarNextWave] = static_cast<float>(std::max(0, world.next_wave_tick() - world.tick())) /
                           std::max(1, rules.wave_period);
    }
  }
}

void WriteBoard(const World& world, const Fog& fog, int player, uint8_t* board) {
  const Map& map = world.map();
  const int n = map.size();
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      const uint8_t terrain = map.terrain(x, y);
      char c = terrain == kGround ? kGroundChar
               : terrain == kRock ? kRockChar
               : (map.resources(x, y) > 0 ? kMineChar : kEmptyMineChar);
      uint8_t value = static_cast<uint8_t>(c);
      if (player >= 0 && !fog.Visible(player, x, y)) {
        value = fog.Seen(player, x, y) ? static_cast<uint8_t>(value | kFogBit) : static_cast<uint8_t>(kUnseenChar);
      }
      board[y * n + x] = value;
    }
  }
  for (int slot = 0; slot < world.end(); ++slot) {
    const Unit& u = world.unit(slot);
    if (!u.Alive() || (player >= 0 && u.player != player && !fog.Visible(player, u.x, u.y))) continue;
    board[u.y * n + u.x] = static_cast<uint8_t>(kUnitChars[u.player][u.type]);
  }
  if (world.variant() != Variant::kCaptureTheFlag) return;
  // Flags are known to both players, so they show through the fog; a flag is
  // drawn over a unit standing on it, and a visible carrier as a carrier.
  for (int p = 0; p < 2; ++p) {
    const Flag& flag = world.flag(p);
    const int i = flag.y * n + flag.x;
    const bool seen_carrier = flag.Carried() && (player < 0 || player != p || fog.Visible(player, flag.x, flag.y));
    board[i] = static_cast<uint8_t>(seen_carrier ? kCarrierChars[1 - p] : kFlagChars[p]);
  }
}

void WriteUnits(const World& world, const Fog& fog, int player, int32_t* rows) {
  std::fill(rows, rows + kMaxUnits * kUnitColumns, 0);
  int32_t* row = rows;
  for (int slot = 0; slot < world.end(); ++slot) {
    const Unit& u = world.unit(slot);
    if (!u.Alive() || (player >= 0 && u.player != player && !fog.Visible(player, u.x, u.y))) continue;
    row[kColUid] = u.uid;
    row[kColPlayer] = u.player;
    row[kColType] = u.type;
    row[kColX] = u.x;
    row[kColY] = u.y;
    row[kColHp] = u.hp;
    row[kColOrder] = static_cast<int32_t>(u.order);
    row += kUnitColumns;
  }
}

}  // namespace elf::minirts
