// MiniRTS units: the unit types, their stats table and the per-unit record
// the tick loop works on. Plain data; every number is an integer in tiles or
// ticks so the game is exactly deterministic.
#pragma once

#include <cstdint>

namespace elf::minirts {

// Towers exist only in the tower_defense variant (see world.h).
enum UnitType : int8_t { kWorker = 0, kMelee, kRanged, kBase, kBarracks, kTower, kNumUnitTypes };

struct UnitStats {
  const char* name;
  int hp;
  int attack;       // damage per hit
  int range_sq;     // attack reach, squared Euclidean tile distance (2 = adjacent incl. diagonal)
  int cooldown;     // ticks between hits
  int move_period;  // ticks per tile moved (0: cannot move)
  int cost;         // resources
  int build_ticks;  // ticks to produce (units) or construct (buildings)
  int sight_sq;     // squared sight radius, for fog of war
  bool building;
};

inline constexpr UnitStats kStats[kNumUnitTypes] = {
    //  name        hp   atk rng cd mv cost build sight building
    {"worker", 50, 2, 2, 10, 4, 50, 60, 16, false},
    {"melee", 100, 15, 2, 10, 4, 100, 80, 25, false},
    {"ranged", 60, 10, 16, 15, 3, 100, 80, 36, false},
    {"base", 600, 0, 0, 0, 0, 0, 0, 25, true},
    {"barracks", 300, 0, 0, 0, 0, 150, 120, 16, true},
    {"tower", 250, 10, 20, 12, 0, 100, 100, 25, true},
};

inline const UnitStats& StatsOf(int type) { return kStats[type]; }

// Economy constants.
inline constexpr int kStartResources = 150;
inline constexpr int kStartWorkers = 2;
inline constexpr int kMineAmount = 1500;  // resources in one mine
inline constexpr int kGatherTicks = 20;   // ticks a worker mines per trip
inline constexpr int kCarry = 10;         // resources carried per trip
inline constexpr int kMaxWorkers = 8;     // the command layer builds no more
inline constexpr int kMaxBarracks = 2;
inline constexpr int kMaxTowers = 4;

enum class Order : int8_t { kIdle, kMove, kAttack, kGather, kBuild, kProduce };

// Sub-phases of the multi-step orders.
enum Phase : int8_t { kToMine = 0, kMining, kToBase, kToSite = 0, kConstructing = 1 };

// One unit or building. A slot is free when uid == 0; uids are never reused
// within an episode, so (slot, uid) names a unit safely after it dies.
struct Unit {
  int32_t uid = 0;
  int32_t target_uid = 0;
  int16_t x = 0, y = 0;
  int16_t hp = 0;
  int16_t damage = 0;     // taken this tick; applied when every unit has acted
  int16_t serial = 0;     // the player's n-th unit this episode (mirror-symmetric tie-breaks)
  int16_t cooldown = 0;   // ticks until the next hit
  int16_t move_wait = 0;  // ticks until the next move
  int16_t timer = 0;      // mining, construction or production ticks left
  int16_t tx = 0, ty = 0; // destination tile (move, gather mine, build site)
  int16_t target = -1;    // slot of the unit attacked
  int8_t player = 0;
  UnitType type = kWorker;
  Order order = Order::kIdle;
  int8_t phase = 0;
  int8_t carry = 0;
  UnitType make = kWorker;   // what a worker builds or a building produces
  bool attack_move = false;  // engage enemies in sight while moving
  bool use_field = false;    // greedy stepping failed: follow the distance field

  bool Alive() const { return uid != 0 && hp > 0; }
};

}  // namespace elf::minirts
