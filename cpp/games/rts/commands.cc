#include "games/rts/commands.h"

#include <cstdlib>

namespace elf::minirts {

namespace {

bool IsTroop(const Unit& u) { return u.type == kMelee || u.type == kRanged; }

// A free ground tile 2 to 4 tiles from the base, not next to a mine, looked
// for in the same order for both players (mirrored), so neither is favoured.
bool BuildingSite(const World& world, int player, int* sx, int* sy) {
  const Map& map = world.map();
  const int bx = map.BaseX(player), by = map.BaseY(player);
  const int sign = player == 0 ? 1 : -1;
  for (int ring = 2; ring <= 4; ++ring) {
    for (int dy = 0; dy <= ring; ++dy) {
      for (int dx = 0; dx <= ring; ++dx) {
        if (dx != ring && dy != ring) continue;
        const int x = bx + sign * dx, y = by + sign * dy;
        if (!world.Free(x, y)) continue;
        bool near_mine = false;
        for (const auto& mine : map.mines()) near_mine = near_mine || Chebyshev(x, y, mine.x, mine.y) <= 1;
        if (near_mine) continue;
        *sx = x;
        *sy = y;
        return true;
      }
    }
  }
  return false;
}

void BuildWorker(World& world, int player) {
  const int base = world.base_slot(player);
  if (base < 0 || world.count(player, kWorker) >= kMaxWorkers) return;
  world.OrderProduce(base, kWorker);
}

void BuildBuilding(World& world, int player, UnitType type, int max_count) {
  if (BuildingsIncludingPending(world, player, type) >= max_count) return;
  if (world.resources(player) < StatsOf(type).cost) return;
  // The worker nearest to the base that is gathering empty-handed.
  const int base = world.base_slot(player);
  if (base < 0) return;
  int best = -1, best_dist = 1 << 30;
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (!u.Alive() || u.player != player || u.type != kWorker || u.order == Order::kBuild) continue;
    const int dist = world.DistSq(u, world.unit(base)) + (u.carry > 0 ? 1000 : 0);
    if (dist < best_dist) {
      best_dist = dist;
      best = s;
    }
  }
  int x, y;
  if (best >= 0 && BuildingSite(world, player, &x, &y)) world.OrderBuild(best, type, x, y);
}

void BuildTroop(World& world, int player, UnitType type) {
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (u.Alive() && u.player == player && u.type == kBarracks && u.order == Order::kIdle) {
      world.OrderProduce(s, type);
    }
  }
}

void Gather(World& world, int player) {
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (u.Alive() && u.player == player && u.type == kWorker && u.order == Order::kIdle) world.OrderGather(s);
  }
}

// Attack-moves the player's troops (carriers excepted) to (x, y), leaving
// those already on their way or fighting on the way.
void AttackMoveTo(World& world, int player, int x, int y) {
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (!u.Alive() || u.player != player || !IsTroop(u) || world.Carrying(s)) continue;
    if (u.attack_move && ((u.order == Order::kMove && u.tx == x && u.ty == y) || u.order == Order::kAttack)) continue;
    world.OrderMove(s, x, y, /*attack_move=*/true);
  }
}

// Every troop not already attacking goes for the nearest enemy unit.
void AttackNearest(World& world, int player) {
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (!u.Alive() || u.player != player || !IsTroop(u) || u.order == Order::kAttack) continue;
    const int enemy = world.NearestEnemy(s, 1 << 30);
    if (enemy >= 0) world.OrderAttack(s, enemy, /*attack_move=*/true);
  }
}

void Attack(World& world, int player) {
  if (world.variant() == Variant::kCaptureTheFlag) {
    // To the enemy flag; once one of ours carries it, toward home with it.
    const Flag& enemy_flag = world.flag(1 - player);
    const Flag& own_flag = world.flag(player);
    if (enemy_flag.Carried()) {
      AttackMoveTo(world, player, own_flag.home_x, own_flag.home_y);
    } else {
      AttackMoveTo(world, player, enemy_flag.x, enemy_flag.y);
    }
    return;
  }
  const int target = world.base_slot(1 - player);
  if (target < 0) {
    AttackNearest(world, player);  // tower_defense: the waves have no base
    return;
  }
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (!u.Alive() || u.player != player || !IsTroop(u)) continue;
    if (u.order == Order::kAttack && u.attack_move) continue;  // already on its way
    world.OrderAttack(s, target, /*attack_move=*/true);
  }
}

void AttackInRange(World& world, int player) {
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (!u.Alive() || u.player != player || !IsTroop(u) || world.Carrying(s)) continue;
    const int enemy = world.NearestEnemy(s, StatsOf(u.type).sight_sq);
    if (enemy >= 0) world.OrderAttack(s, enemy, /*attack_move=*/false);
  }
}

// ctf, the own flag away from home: chase its carrier, or go to return it.
void RecoverFlag(World& world, int player) {
  const Flag& flag = world.flag(player);
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (!u.Alive() || u.player != player || !IsTroop(u) || world.Carrying(s)) continue;
    if (flag.Carried()) {
      if (u.order != Order::kAttack || u.target != flag.carrier) world.OrderAttack(s, flag.carrier, false);
    } else if (u.order != Order::kMove || u.tx != flag.x || u.ty != flag.y) {
      world.OrderMove(s, flag.x, flag.y, /*attack_move=*/true);
    }
  }
}

void Defend(World& world, int player) {
  if (world.variant() == Variant::kCaptureTheFlag && !world.flag(player).AtHome()) {
    RecoverFlag(world, player);
    return;
  }
  int rx, ry;
  RallyPoint(world, player, &rx, &ry);
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (!u.Alive() || u.player != player || !IsTroop(u) || world.Carrying(s)) continue;
    if (Chebyshev(u.x, u.y, rx, ry) > 3) {
      if (u.order != Order::kMove || u.tx != rx || u.ty != ry) world.OrderMove(s, rx, ry, /*attack_move=*/true);
      continue;
    }
    const int enemy = world.NearestEnemy(s, StatsOf(u.type).sight_sq);
    if (enemy >= 0) {
      world.OrderAttack(s, enemy, /*attack_move=*/false);
    } else if (u.order == Order::kAttack) {
      world.OrderIdle(s);
    }
  }
}

}  // namespace

int BuildingsIncludingPending(const World& world, int player, UnitType type) {
  int total = world.count(player, type);
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    total += u.Alive() && u.player == player && u.order == Order::kBuild && u.make == type;
  }
  return total;
}

int BarracksIncludingPending(const World& world, int player) {
  return BuildingsIncludingPending(world, player, kBarracks);
}

int NumCommands(Variant variant) { return variant == Variant::kTowerDefense ? kNumCommands + 1 : kNumCommands; }

const char* CommandHelp(Variant variant) {
  switch (variant) {
    case Variant::kCaptureTheFlag: return kCtfCommandHelp;
    case Variant::kTowerDefense: return kTowerDefenseCommandHelp;
    default: return kCommandHelp;
  }
}

void RallyPoint(const World& world, int player, int* x, int* y) {
  const Map& map = world.map();
  const int sign = player == 0 ? 1 : -1;
  *x = map.BaseX(player) + sign * 2;
  *y = map.BaseY(player) + sign * 2;
}

void ApplyCommand(World& world, int player, int command) {
  switch (command) {
    case kCmdBuildWorker: BuildWorker(world, player); break;
    case kCmdBuildBarracks: BuildBuilding(world, player, kBarracks, kMaxBarracks); break;
    case kCmdBuildTower:
      if (world.variant() == Variant::kTowerDefense) BuildBuilding(world, player, kTower, kMaxTowers);
      break;
    case kCmdBuildMelee: BuildTroop(world, player, kMelee); break;
    case kCmdBuildRanged: BuildTroop(world, player, kRanged); break;
    case kCmdGather: Gather(world, player); break;
    case kCmdAttack: Attack(world, player); break;
    case kCmdAttackInRange: AttackInRange(world, player); break;
    case kCmdDefend: Defend(world, player); break;
    default: break;  // kCmdIdle
  }
}

}  // namespace elf::minirts
