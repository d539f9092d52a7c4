// MiniRTS strategic commands: the discrete actions a Python agent (and the
// built-in AIs) choose from every frame_skip ticks, and the command layer
// that turns one command into orders for the player's units. The variants
// keep the meaning of each command and aim it at their own goal:
//   ctf             attack: troops go for the enemy flag (escort it home once
//                   a troop carries it); defend: while the own flag is away,
//                   troops chase its carrier or go to return it. Carriers
//                   ignore commands (they head home).
//   tower_defense   attack: troops attack the nearest wave unit; one more
//                   command, build tower (a worker builds one near the base,
//                   up to kMaxTowers).
#pragma once

#include "games/rts/world.h"

namespace elf::minirts {

enum Command : int {
  kCmdIdle = 0,         // change nothing
  kCmdBuildWorker,      // the base trains a worker (up to kMaxWorkers)
  kCmdBuildBarracks,    // a worker builds a barracks near the base (up to kMaxBarracks)
  kCmdBuildMelee,       // every idle barracks trains a melee unit
  kCmdBuildRanged,      // every idle barracks trains a ranged unit
  kCmdGather,           // idle workers gather from the nearest mine
  kCmdAttack,           // troops attack-move on the enemy base
  kCmdAttackInRange,    // troops attack the nearest enemy in their sight
  kCmdDefend,           // troops fall back to the base and fight what comes near it
  kNumCommands,         // of the standard and ctf variants
  kCmdBuildTower = kNumCommands,  // tower_defense only: a worker builds a tower near the base
};

inline constexpr const char* kCommandHelp =
    "strategic command: 0 idle, 1 build worker, 2 build barracks, 3 build melee, 4 build ranged, "
    "5 gather, 6 attack, 7 attack units in range, 8 retreat/defend";
inline constexpr const char* kCtfCommandHelp =
    "strategic command: 0 idle, 1 build worker, 2 build barracks, 3 build melee, 4 build ranged, "
    "5 gather, 6 go for the enemy flag, 7 attack units in range, 8 defend / recover the own flag";
inline constexpr const char* kTowerDefenseCommandHelp =
    "strategic command: 0 idle, 1 build worker, 2 build barracks, 3 build melee, 4 build ranged, "
    "5 gather, 6 attack the nearest enemy, 7 attack units in range, 8 retreat/defend, 9 build tower";

// Commands of a variant (tower_defense has build tower), and their help line.
int NumCommands(Variant variant);
const char* CommandHelp(Variant variant);

// Carries out one command for `player`. Commands that cannot be afforded or
// have nothing to act on do nothing.
void ApplyCommand(World& world, int player, int command);

// Barracks the player owns plus those its workers are on the way to build.
int BarracksIncludingPending(const World& world, int player);
// Buildings of `type` the player owns plus those on the way (its workers').
int BuildingsIncludingPending(const World& world, int player, UnitType type);
// The tile where the player's defenders gather: two tiles from the base
// toward the map's centre.
void RallyPoint(const World& world, int player, int* x, int* y);

}  // namespace elf::minirts
