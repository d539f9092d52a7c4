#include "games/minirts/commands.h"

#include <cstdlib>

namespace elf::minirts {

namespace {

bool IsTroop(const Unit& u) { return u.type == kMelee || u.type == kRanged; }

// A free ground tile 2 to 4 tiles from the base, not next to a mine, looked
// for in the same order for both players (mirrored), so neither is favoured.
bool BarracksSite(const World& world, int player, int* sx, int* sy) {
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

void BuildBarracks(World& world, int player) {
  if (BarracksIncludingPending(world, player) >= kMaxBarracks) return;
  if (world.resources(player) < StatsOf(kBarracks).cost) return;
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
  if (best >= 0 && BarracksSite(world, player, &x, &y)) world.OrderBuild(best, kBarracks, x, y);
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

void Attack(World& world, int player) {
  const int target = world.base_slot(1 - player);
  if (target < 0) return;
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
    if (!u.Alive() || u.player != player || !IsTroop(u)) continue;
    const int enemy = world.NearestEnemy(s, StatsOf(u.type).sight_sq);
    if (enemy >= 0) world.OrderAttack(s, enemy, /*attack_move=*/false);
  }
}

void Defend(World& world, int player) {
  int rx, ry;
  RallyPoint(world, player, &rx, &ry);
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (!u.Alive() || u.player != player || !IsTroop(u)) continue;
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

int BarracksIncludingPending(const World& world, int player) {
  int total = world.count(player, kBarracks);
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    total += u.Alive() && u.player == player && u.order == Order::kBuild && u.make == kBarracks;
  }
  return total;
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
    case kCmdBuildBarracks: BuildBarracks(world, player); break;
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
