// MiniRTS built-in AIs, playing through the same command layer as a Python
// agent (plus per-unit micro for hit_and_run). They see the whole map (no
// fog), like the rule-based AIs of the original platform.
//   simple       workers to 4, one barracks, mostly melee; attacks once it
//                has 4 to 6 troops, defends the base until then.
//   hit_and_run  ranged troops only; from 3 or 4 on they harass the nearest enemy
//                and step back out of reach of melee units while reloading.
// In the variants (world.h) they keep their economy and troop mix, and:
//   ctf             'attack' goes for the enemy flag (hit_and_run's troops
//                   head for it when nothing is in sight); whenever the own
//                   flag is away from home, every troop goes after it.
//   tower_defense   they play player 0 only (player 1 is the waves): build
//                   towers (two before any troop, up to kMaxTowers), keep
//                   troops at home (simple: mostly melee, hit_and_run:
//                   ranged), never attack.
// PlayMatch runs AI against AI (or against the waves) entirely in C++.
#pragma once

#include <string>
#include <vector>

#include "elf/rng.h"
#include "games/rts/world.h"

namespace elf::minirts {

enum class AIKind { kSimple, kHitAndRun };

// The valid names, in the order error messages list them.
const std::vector<std::string>& AINames();
// Throws std::invalid_argument naming `option` and listing the valid names.
AIKind ParseAI(const std::string& name, const std::string& option);

class BuiltinAI {
 public:
  explicit BuiltinAI(AIKind kind = AIKind::kSimple) : kind_(kind) {}
  // A new game: the troop count that starts an attack is drawn from `rng`
  // (simple: 4 to 6, hit_and_run: 3 or 4), so AI-vs-AI games vary.
  void Reset(Rng& rng);
  // A strategic decision; called every frame_skip ticks.
  void Decide(World& world, int player);
  // Per-unit control; called every tick (acts on one tick in four).
  void Micro(World& world, int player);

 private:
  AIKind kind_;
  bool attacking_ = false;
  int attack_at_ = 5;
};

struct MatchResult {
  int winner = -1;  // 0, 1, 2 (draw) or -1 (max_tick reached)
  int ticks = 0;
};

// One game of `ai0` (player 0) against `ai1` on a new map drawn from `rng`,
// deciding every `decide_every` ticks, up to `max_tick` ticks.
MatchResult PlayMatch(World& world, BuiltinAI& ai0, BuiltinAI& ai1, Rng& rng, int max_tick, int decide_every);

}  // namespace elf::minirts
