// MiniRTS features, written from one player's point of view. Player 1's
// planes are rotated by 180 degrees, so both players see their own base in
// the top-left corner (the map is point-symmetric) and one network can play
// either seat. Enemy units appear only on tiles the player sees now.
// The variants append their own planes and scalars after the standard ones.
//
// The board: one byte per tile, in map coordinates (row y, column x; never
// rotated), the character of what stands there (see kBoardHelp). It is what
// renderers draw (examples/minirts_render.py); a player's board hides what it
// does not see now, an observer's board shows everything.
#pragma once

#include <cstdint>

#include "games/rts/fog.h"
#include "games/rts/world.h"

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
  kNumPlanes = 15,      // of the standard variant
  // ctf
  kPlaneOwnFlag = 15,   // 1 where the own flag is
  kPlaneEnemyFlag = 16, // 1 where the enemy flag is (flags are always known)
  kNumCtfPlanes = 17,
  // tower_defense
  kPlaneOwnTower = 15,  // own towers
  kNumTowerDefensePlanes = 16,
};

// Entries of "v".
enum Scalar : int {
  kScalarResources = 0,  // own resources / 100
  kScalarOwnCounts = 1,  // + unit type (5): own unit counts / 10
  kScalarEnemyCounts = 6,  // + unit type (5): visible enemy unit counts / 10
  kScalarBaseHp = 11,    // own base hit points / max
  kScalarEnemyBaseHp = 12,  // enemy base hit points / max if visible, else 0
  kScalarTick = 13,      // tick / max_tick
  kNumScalars = 14,      // of the standard variant
  // ctf: 0 at home, 0.5 on the ground elsewhere, 1 carried
  kScalarOwnFlag = 14,
  kScalarEnemyFlag = 15,
  kNumCtfScalars = 16,
  // tower_defense
  kScalarOwnTowers = 14,  // own towers / 10
  kScalarWaves = 15,      // waves spawned / waves
  kScalarNextWave = 16,   // ticks to the next wave / wave_period (0 after the last)
  kNumTowerDefenseScalars = 17,
};

inline constexpr const char* kPlanesHelp =
    "planes [C, H, W] from the player's view (player 1 rotated 180 degrees): 0-4 own worker, melee, "
    "ranged, base, barracks; 5-9 visible enemy units of the same types; 10 hit points / max; "
    "11 mine resources / 1500; 12 rock; 13 visible now; 14 ever seen";
inline constexpr const char* kCtfPlanesHelp =
    "planes [C, H, W] from the player's view (player 1 rotated 180 degrees): 0-4 own worker, melee, "
    "ranged, base, barracks; 5-9 visible enemy units of the same types; 10 hit points / max; "
    "11 mine resources / 1500; 12 rock; 13 visible now; 14 ever seen; 15 own flag; 16 enemy flag";
inline constexpr const char* kTowerDefensePlanesHelp =
    "planes [C, H, W]: 0-4 own worker, melee, ranged, base, barracks; 5-9 visible enemy units of the "
    "same types; 10 hit points / max; 11 mine resources / 1500; 12 rock; 13 visible now; 14 ever seen; "
    "15 own towers";
inline constexpr const char* kScalarsHelp =
    "scalars: own resources / 100; own counts / 10 of worker, melee, ranged, base, barracks; "
    "visible enemy counts / 10 of the same; own base hp fraction; visible enemy base hp fraction; "
    "tick / max_tick";
inline constexpr const char* kCtfScalarsHelp =
    "scalars: own resources / 100; own counts / 10 of worker, melee, ranged, base, barracks; "
    "visible enemy counts / 10 of the same; own base hp fraction; visible enemy base hp fraction; "
    "tick / max_tick; own flag and enemy flag state (0 home, 0.5 dropped, 1 carried)";
inline constexpr const char* kTowerDefenseScalarsHelp =
    "scalars: own resources / 100; own counts / 10 of worker, melee, ranged, base, barracks; "
    "visible enemy counts / 10 of the same; own base hp fraction; 0; tick / max_tick; own towers / 10; "
    "waves spawned / waves; ticks to the next wave / wave_period";

struct FeatureLayout {
  int planes;
  int scalars;
  const char* planes_help;
  const char* scalars_help;
};
FeatureLayout LayoutOf(Variant variant);

// s: LayoutOf(variant).planes * n * n floats; v: LayoutOf(variant).scalars floats.
void WriteFeatures(const World& world, const Fog& fog, int player, int max_tick, float* s, float* v);

// Board characters. Player 0's units are upper case, player 1's lower case.
inline constexpr char kUnitChars[2][kNumUnitTypes] = {{'W', 'M', 'R', 'B', 'K', 'T'},
                                                      {'w', 'm', 'r', 'b', 'k', 't'}};
inline constexpr char kGroundChar = '.', kRockChar = '#', kMineChar = '$', kEmptyMineChar = '%';
inline constexpr char kFlagChars[2] = {'F', 'f'};     // a flag on the ground (ctf)
inline constexpr char kCarrierChars[2] = {'C', 'c'};  // a troop carrying the enemy flag (ctf)
inline constexpr char kUnseenChar = ' ';              // a tile the player never saw
inline constexpr uint8_t kFogBit = 0x80;              // added to tiles seen before but not now

inline constexpr const char* kBoardHelp =
    "board [H, W] uint8 in map coordinates (not rotated), one ASCII character per tile: '.' ground, "
    "'#' rock, '$' mine, '%' empty mine; player 0's units W worker, M melee, R ranged, B base, "
    "K barracks, T tower, C flag carrier, F flag on the ground; player 1's in lower case. From a "
    "player's view: ' ' never seen; +128 (high bit) on tiles seen before but not visible now, which "
    "show terrain only";

// The units a seat sees, for a seat that commands them one by one
// (unit_commands.h): one row of kUnitColumns int32 per unit, own units and
// the enemy's on tiles the seat sees now, in slot order; the other rows zero.
enum UnitColumn : int { kColUid = 0, kColPlayer, kColType, kColX, kColY, kColHp, kColOrder, kUnitColumns };
inline constexpr const char* kUnitsHelp =
    "units [160, 7] int32 in map coordinates (not rotated), one row per unit the seat sees (its own, the "
    "enemy's on tiles it sees now), then rows of zeros: uid, player, type (0 worker, 1 melee, 2 ranged, 3 base, "
    "4 barracks, 5 tower), x, y, hp, order (0 idle, 1 move, 2 attack, 3 gather, 4 build, 5 produce)";

// `player` 0 or 1: what that player sees; -1: everything. `rows` holds kMaxUnits rows.
void WriteUnits(const World& world, const Fog& fog, int player, int32_t* rows);

// One byte per tile of the map, row-major. `player` 0 or 1: what that player
// sees (fog of war as in the features); -1: everything (an observer).
void WriteBoard(const World& world, const Fog& fog, int player, uint8_t* board);

}  // namespace elf::minirts
