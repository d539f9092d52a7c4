// MiniRTS features, written from one player's point of view. Player 1's
// planes are rotated by 180 degrees, so both players see their own base in
// the top-left corner (the map is point-symmetric) and one network can play
// either seat. Enemy units appear only on tiles the player sees now.
#pragma once

#include "games/minirts/fog.h"
#include "games/minirts/world.h"

namespace elf::minirts {

// Planes of "s", each [H, W].
enum Plane : int {
  kPlaneOwn = 0,        // + unit type (5 planes): own worker, melee, ranged, base, barracks
  kPlaneEnemy = 5,      // + unit type (5 planes): visible enemy units of each type
  kPlaneHp = 10,        // hit points / max, own and visible enemy units
  kPlaneResources = 11, // resources left in a mine / kMineAmount
  kPlaneRock = 12,      // impassable terrain
  kPlaneVisible = 13,   // 1 where the player sees now
  kPlaneSeen = 14,      // 1 where the player has ever seen (at observation times)
  kNumPlanes = 15,
};

// Entries of "v".
enum Scalar : int {
  kScalarResources = 0,  // own resources / 100
  kScalarOwnCounts = 1,  // + unit type (5): own unit counts / 10
  kScalarEnemyCounts = 6,  // + unit type (5): visible enemy unit counts / 10
  kScalarBaseHp = 11,    // own base hit points / max
  kScalarEnemyBaseHp = 12,  // enemy base hit points / max if visible, else 0
  kScalarTick = 13,      // tick / max_tick
  kNumScalars = 14,
};

inline constexpr const char* kPlanesHelp =
    "planes [C, H, W] from the player's view (player 1 rotated 180 degrees): 0-4 own worker, melee, "
    "ranged, base, barracks; 5-9 visible enemy units of the same types; 10 hit points / max; "
    "11 mine resources / 1500; 12 rock; 13 visible now; 14 ever seen";
inline constexpr const char* kScalarsHelp =
    "scalars: own resources / 100; own counts / 10 of worker, melee, ranged, base, barracks; "
    "visible enemy counts / 10 of the same; own base hp fraction; visible enemy base hp fraction; "
    "tick / max_tick";

// s: kNumPlanes * n * n floats; v: kNumScalars floats.
void WriteFeatures(const World& world, const Fog& fog, int player, int max_tick, float* s, float* v);

}  // namespace elf::minirts
