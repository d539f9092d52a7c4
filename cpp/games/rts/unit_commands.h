// MiniRTS per-unit commands: what a person gives with the mouse (ELF's page
// allowed the same): one of the player's units stops, moves to a tile,
// attacks an enemy unit, gathers from a mine, or builds (a worker constructs
// a building at a tile; a base or barracks trains a unit). The game takes
// them from a seat whose option unit_commands is > 0, after its strategic
// command (commands.h), so they override it for the units they name.
// Every command is checked here against the rules and what the seat sees; a
// refused one changes nothing and says why (UnitCommandResult), and the game
// goes on. Units are named by uid (world.h: never reused within an episode),
// so a command never reaches a unit that took a dead one's slot. Positions
// are map coordinates (never rotated, as the board and the units observation).
#pragma once

#include <cstdint>

#include "games/rts/fog.h"
#include "games/rts/world.h"

namespace elf::minirts {

enum UnitCommandKind : int {
  kUnitNone = 0,  // an empty command slot
  kUnitStop,      // a mobile unit drops its order
  kUnitMove,      // a mobile unit walks to (x, y) without engaging
  kUnitAttack,    // a unit that can hit attacks the enemy unit `target`
  kUnitGather,    // a worker gathers from the mine at (x, y)
  kUnitBuild,     // a worker builds `type` at (x, y); a base or barracks trains `type`
  kNumUnitCommandKinds,
};

enum UnitCommandResult : int {
  kUnitResultNone = 0,   // no command in the slot
  kUnitResultDone,       // accepted: the unit has its new order
  kUnitResultNoUnit,     // no alive unit has that uid
  kUnitResultNotOwned,   // the unit is not the seat's player's
  kUnitResultCannot,     // the unit cannot do that (a building moves, a melee gathers, ...)
  kUnitResultOffMap,     // (x, y) is off the map
  kUnitResultNoTarget,   // the target is no enemy unit the player sees now
  kUnitResultNoMine,     // (x, y) is no mine with resources left
  kUnitResultNotGround,  // a building's site is rock or a mine
  kUnitResultCost,       // the player cannot afford it
  kUnitResultBusy,       // the building is producing already
  kUnitResultLimit,      // the player has as many units as the game allows
  kUnitResultCarrier,    // ctf: a flag carrier heads home by itself
  kNumUnitResults,
};

// The fields of one command, in the order of the action key's components.
enum UnitCommandField : int { kFieldKind = 0, kFieldUnit, kFieldTarget, kFieldX, kFieldY, kFieldType, kNumUnitFields };

struct UnitCommand {
  int kind = kUnitNone;
  int32_t unit = 0;    // uid of the commanded unit
  int32_t target = 0;  // uid of the attacked unit
  int x = 0, y = 0;    // a tile: move, gather, build
  int type = 0;        // UnitType built or trained
};

// A component's count in the action key: uids are int32 and never 0.
inline constexpr int64_t kUidRange = 2147483647;

inline constexpr const char* kUnitCommandHelp =
    "per-unit commands, flattened [unit_commands, 6], each kind, unit uid, target uid, x, y, type "
    "(map coordinates; x and y range over the largest map, the game refuses those off this one). "
    "kind: 0 none, 1 stop, 2 move, 3 attack, 4 gather, 5 build; "
    "type: 0 worker, 1 melee, 2 ranged, 3 base, 4 barracks, 5 tower. "
    "stop and move: a mobile unit; attack: target, an enemy unit in sight; gather: a worker, (x, y) a mine; "
    "build: a worker builds type (barracks; tower_defense: tower) at (x, y), a base trains a worker, "
    "a barracks a melee or ranged unit";
inline constexpr const char* kUnitResultsHelp =
    "what became of each per-unit command of the previous step: 0 none, 1 done, 2 no such unit, "
    "3 not your unit, 4 the unit cannot do that, 5 target off the map, 6 no enemy unit in sight with that id, "
    "7 no mine with resources there, 8 cannot build on rock or a mine, 9 not enough resources, "
    "10 the building is busy, 11 unit limit reached, 12 a flag carrier heads home by itself";

// Carries out `command` for `player` if the rules allow it; says what became
// of it. `fog`: what the player sees (nullptr: everything).
UnitCommandResult ApplyUnitCommand(World& world, const Fog* fog, int player, const UnitCommand& command);

}  // namespace elf::minirts
