// MiniRTS strategic commands: the discrete actions a Python agent (and the
// built-in AIs) choose from every frame_skip ticks, and the command layer
// that turns one command into orders for the player's units.
#pragma once

#include "games/minirts/world.h"

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
  kNumCommands,
};

inline constexpr const char* kCommandHelp =
    "strategic command: 0 idle, 1 build worker, 2 build barracks, 3 build melee, 4 build ranged, "
    "5 gather, 6 attack, 7 attack units in range, 8 retreat/defend";

// Carries out one command for `player`. Commands that cannot be afforded or
// have nothing to act on do nothing.
void ApplyCommand(World& world, int player, int command);

// Barracks the player owns plus those its workers are on the way to build.
int BarracksIncludingPending(const World& world, int player);
// The tile where the player's defenders gather: two tiles from the base
// toward the map's centre.
void RallyPoint(const World& world, int player, int* x, int* y);

}  // namespace elf::minirts
