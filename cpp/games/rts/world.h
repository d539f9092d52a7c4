// MiniRTS world: the state of one game (map, units, players' resources) and
// the deterministic tick loop that moves units, gathers, constructs,
// produces, fights and removes the dead. Orders are given through the
// Order* methods (by the command layer and the built-in AIs); Tick() carries
// them out. Units live in a fixed array of slots sized at construction, so a
// tick never allocates. Not thread-safe: one world per game.
//
// Variants (Rules::variant), on the same units and tick loop:
//   standard        destroy the enemy base.
//   ctf             capture the flag: each player's flag stands behind its
//                   base. An enemy troop (melee or ranged) next to a flag that
//                   is not carried picks it up and heads home by itself; it
//                   wins by reaching its own flag's home tile (next to it).
//                   A carrier that dies drops the flag where it stood; a unit
//                   of the flag's owner next to the dropped flag returns it
//                   home. Destroying the enemy base also wins.
//   tower_defense   player 0 defends its base (it may build towers) against
//                   `waves` waves of player 1's troops, one every
//                   `wave_period` ticks, that appear in the far corner and
//                   attack-move on the base. Player 0 wins when the last
//                   wave is dead, player 1 when the base falls. Player 1 has
//                   no base, workers or economy.
//
// Fairness. The map is point-symmetric and every scan that breaks a tie by
// direction is mirrored for player 1, so the two players' situations are
// mirror images; what remains is the order units act in within a tick. That
// order never decides a fight (hits of one tick land together, at its end),
// runs up or down the slots by a coin flip each tick, and who holds the lower
// slots is a coin flip each episode. Per-unit phases (enemy scans, path
// tie-breaks) follow Unit::serial, the same for mirrored units. So with the
// same AI on both sides each player wins half the games (tested).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "elf/rng.h"
#include "games/rts/map.h"
#include "games/rts/units.h"

namespace elf::minirts {

inline constexpr int kMaxUnits = 160;  // both players together

enum class Variant : int8_t { kStandard, kCaptureTheFlag, kTowerDefense };

// The valid variant names ("standard", "ctf", "tower_defense"), in order.
const std::vector<std::string>& VariantNames();
const char* VariantName(Variant variant);
// Throws std::invalid_argument naming `option` and listing the valid names.
Variant ParseVariant(const std::string& name, const std::string& option);

struct Rules {
  Variant variant = Variant::kStandard;
  int waves = 7;           // tower_defense: waves in a game
  int wave_period = 500;   // tower_defense: ticks between two waves
  int first_wave = 600;    // tower_defense: tick of the first wave
};

// A capture-the-flag flag. While carried it moves with its carrier.
struct Flag {
  int16_t home_x = 0, home_y = 0;  // where it stands at the start and returns to
  int16_t x = 0, y = 0;            // where it is now
  int16_t carrier = -1;            // slot of the enemy troop carrying it, or -1
  int32_t carrier_uid = 0;
  bool AtHome() const { return carrier < 0 && x == home_x && y == home_y; }
  bool Carried() const { return carrier >= 0; }
};

class World {
 public:
  explicit World(int map_size, const Rules& rules = Rules{});

  // A new episode on a new map: each player gets a base, kStartWorkers
  // workers that start gathering, and kStartResources (tower_defense:
  // player 1 gets nothing; its waves come later).
  void Reset(Rng& rng);
  // One tick. Does nothing once the game has a winner.
  void Tick();

  const Rules& rules() const { return rules_; }
  Variant variant() const { return rules_.variant; }
  // The winner: -1 while the game goes on, 0 or 1, or 2 for a draw (both
  // bases fell, or both flags were captured, on the same tick).
  int winner() const { return winner_; }
  // ctf: player p's flag (carried by player 1 - p's troops).
  const Flag& flag(int player) const { return flags_[player]; }
  // ctf: whether the unit in `slot` carries a flag.
  bool Carrying(int slot) const { return flags_[0].carrier == slot || flags_[1].carrier == slot; }
  // tower_defense: waves spawned so far, and the tick of the next one.
  int waves_spawned() const { return waves_spawned_; }
  int next_wave_tick() const { return rules_.first_wave + waves_spawned_ * rules_.wave_period; }
  int tick() const { return tick_; }
  int resources(int player) const { return resources_[player]; }
  void set_resources(int player, int amount) { resources_[player] = amount; }
  // Alive units of a type, per player (buildings under construction excluded).
  int count(int player, int type) const { return counts_[player][type]; }
  int base_slot(int player) const { return base_slot_[player]; }
  // Cumulative damage a player's units dealt (for the shaped reward).
  int damage_dealt(int player) const { return damage_dealt_[player]; }
  // Slots [0, end()) may hold units; test Unit::Alive().
  int end() const { return end_; }
  const Unit& unit(int slot) const { return units_[slot]; }
  Unit& unit(int slot) { return units_[slot]; }
  const Map& map() const { return map_; }
  Map& map() { return map_; }
  int occupant(int x, int y) const { return occupancy_[map_.Index(x, y)]; }
  bool Free(int x, int y) const { return map_.Passable(x, y) && occupancy_[map_.Index(x, y)] < 0; }

  // The slot of the alive unit `uid`, or -1 (dead, never spawned, or 0).
  int SlotOf(int32_t uid) const;

  // Places a unit (for setup and tests); returns its slot or -1 when the
  // tile is taken or no slot is free.
  int Spawn(int player, UnitType type, int x, int y);

  // Orders. Each replaces the unit's current order.
  void OrderIdle(int slot);
  void OrderMove(int slot, int x, int y, bool attack_move);
  void OrderAttack(int slot, int target_slot, bool attack_move);
  // Gather from the nearest mine with resources left; idle if none.
  void OrderGather(int slot);
  // A worker gathers from the mine at (x, y) (one with resources left); once
  // it runs dry, from the nearest other, as OrderGather.
  void OrderGatherAt(int slot, int x, int y);
  // A worker constructs `type` at (x, y); pays now. False if unaffordable.
  bool OrderBuild(int slot, UnitType type, int x, int y);
  // A building produces `type`; pays now. False if unaffordable or busy.
  bool OrderProduce(int slot, UnitType type);

  // The nearest alive enemy of `slot` within squared distance `radius_sq`,
  // or -1. Units before buildings when `units_first`.
  int NearestEnemy(int slot, int radius_sq, bool units_first = true) const;
  int DistSq(const Unit& a, const Unit& b) const {
    const int dx = a.x - b.x, dy = a.y - b.y;
    return dx * dx + dy * dy;
  }

 private:
  void Act(int slot);
  // Variant rules, run by Tick (variants.cc).
  void ResetFlags();
  void UpdateFlags();  // after the dead are removed; may set the winner
  void SpawnWave();
  void ActGather(Unit& u);
  void ActBuild(Unit& u);
  void ActProduce(Unit& u);
  void ActAttack(Unit& u);
  void Hit(Unit& u, Unit& target);
  // Moves one tile toward (gx, gy) when the unit may move; true if it moved.
  bool Step(Unit& u, int gx, int gy);
  void MoveTo(Unit& u, int x, int y);
  // A free ground tile around (x, y), nearest rings first, or false; each
  // ring is scanned in the order `sign` (+1 / -1: mirrored for player 1).
  bool FreeTileNear(int x, int y, int max_ring, int* fx, int* fy, int sign) const;
  // The nearest mine with resources left, ties broken mirror-symmetrically.
  int NearestMine(int x, int y, int player) const;
  void Remove(int slot);

  Rules rules_;
  Map map_;
  PathCache paths_;
  std::vector<Unit> units_;
  std::vector<int16_t> occupancy_;  // slot per tile, -1 when free
  int end_ = 0;
  int32_t next_uid_ = 1;
  int tick_ = 0;
  int winner_ = -1;
  int resources_[2] = {0, 0};
  int spawned_[2] = {0, 0};  // units each player spawned this episode (Unit::serial)
  Rng order_rng_;            // which way the tick loop runs, per tick
  int counts_[2][kNumUnitTypes] = {};
  int base_slot_[2] = {-1, -1};
  int damage_dealt_[2] = {0, 0};
  Flag flags_[2];
  int waves_spawned_ = 0;
};

// Chebyshev distance: 1 means adjacent (diagonals included).
inline int Chebyshev(int ax, int ay, int bx, int by) {
  const int dx = ax > bx ? ax - bx : bx - ax;
  const int dy = ay > by ? ay - by : by - ay;
  return dx > dy ? dx : dy;
}

}  // namespace elf::minirts
