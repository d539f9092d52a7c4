#include "games/rts/world.h"

#include <algorithm>
#include <cstdlib>

namespace elf::minirts {

namespace {
constexpr int kDx[8] = {1, -1, 0, 0, 1, 1, -1, -1};
constexpr int kDy[8] = {0, 0, 1, -1, 1, -1, 1, -1};
// Units a player may own (pending production included), so Spawn never runs
// out of slots.
constexpr int kPlayerUnitCap = kMaxUnits / 2 - 8;
// Idle and attack-moving units look for enemies on one tick in kScanPeriod.
constexpr int kScanPeriod = 4;
}  // namespace

World::World(int map_size, const Rules& rules)
    : rules_(rules), map_(map_size), paths_(map_size), units_(kMaxUnits), occupancy_(map_size * map_size, -1) {}

void World::Reset(Rng& rng) {
  map_.Generate(rng);
  paths_.Clear();
  std::fill(units_.begin(), units_.end(), Unit{});
  std::fill(occupancy_.begin(), occupancy_.end(), static_cast<int16_t>(-1));
  end_ = 0;
  next_uid_ = 1;
  tick_ = 0;
  winner_ = -1;
  for (int p = 0; p < 2; ++p) {
    resources_[p] = kStartResources;
    spawned_[p] = 0;
    damage_dealt_[p] = 0;
    base_slot_[p] = -1;
    for (int& c : counts_[p]) c = 0;
  }
  // Who gets the lower slots (and so wins the slot-order tie-breaks) is a coin
  // flip per episode; which way the tick loop runs is one per tick.
  const int first = static_cast<int>(rng.Below(2));
  order_rng_.Seed(rng.Next(), 0);
  waves_spawned_ = 0;
  for (int k = 0; k < 2; ++k) {
    const int p = k ^ first;
    if (p == 1 && rules_.variant == Variant::kTowerDefense) continue;  // the waves come later
    Spawn(p, kBase, map_.BaseX(p), map_.BaseY(p));
    for (int i = 0; i < kStartWorkers; ++i) {
      int x, y;
      if (FreeTileNear(map_.BaseX(p), map_.BaseY(p), 2, &x, &y, p == 0 ? 1 : -1)) OrderGather(Spawn(p, kWorker, x, y));
    }
  }
  ResetFlags();
}

int World::Spawn(int player, UnitType type, int x, int y) {
  if (!Free(x, y)) return -1;
  int slot = 0;
  while (slot < kMaxUnits && units_[slot].uid != 0) ++slot;
  if (slot == kMaxUnits) return -1;
  Unit& u = units_[slot];
  u = Unit{};
  u.uid = next_uid_++;
  u.serial = static_cast<int16_t>(spawned_[player]++);
  u.player = static_cast<int8_t>(player);
  u.type = type;
  u.hp = static_cast<int16_t>(StatsOf(type).hp);
  u.x = static_cast<int16_t>(x);
  u.y = static_cast<int16_t>(y);
  occupancy_[map_.Index(x, y)] = static_cast<int16_t>(slot);
  ++counts_[player][type];
  if (type == kBase && base_slot_[player] < 0) base_slot_[player] = slot;
  end_ = std::max(end_, slot + 1);
  return slot;
}

void World::Remove(int slot) {
  Unit& u = units_[slot];
  occupancy_[map_.Index(u.x, u.y)] = -1;
  --counts_[u.player][u.type];
  if (base_slot_[u.player] == slot) base_slot_[u.player] = -1;
  u.uid = 0;
}

void World::Tick() {
  if (winner_ >= 0) return;
  ++tick_;
  if (rules_.variant == Variant::kTowerDefense && waves_spawned_ < rules_.waves && tick_ >= next_wave_tick()) {
    SpawnWave();
  }
  // Units act one after the other, so who moves first still decides who gets
  // a contested tile: the order runs up or down the slots, by a coin flip per
  // tick (a fixed alternation would favour one player at every event that
  // falls on an odd tick). Hits are simultaneous: damage is applied below.
  if (order_rng_.Next() >> 63) {
    for (int s = 0; s < end_; ++s) {
      if (units_[s].Alive()) Act(s);
    }
  } else {
    for (int s = end_ - 1; s >= 0; --s) {
      if (units_[s].Alive()) Act(s);
    }
  }
  for (int s = 0; s < end_; ++s) {
    Unit& u = units_[s];
    if (u.uid == 0) continue;
    u.hp = static_cast<int16_t>(u.hp - u.damage);
    u.damage = 0;
    if (u.hp <= 0) Remove(s);
  }
  while (end_ > 0 && units_[end_ - 1].uid == 0) --end_;
  const bool fell0 = base_slot_[0] < 0;
  if (rules_.variant == Variant::kTowerDefense) {
    const bool cleared = waves_spawned_ == rules_.waves && count(1, kMelee) + count(1, kRanged) == 0;
    if (fell0 || cleared) winner_ = fell0 ? 1 : 0;
    return;
  }
  const bool fell1 = base_slot_[1] < 0;
  if (fell0 || fell1) winner_ = fell0 && fell1 ? 2 : (fell0 ? 1 : 0);
  if (rules_.variant == Variant::kCaptureTheFlag) UpdateFlags();
}

void World::Act(int slot) {
  Unit& u = units_[slot];
  if (u.cooldown > 0) --u.cooldown;
  if (u.move_wait > 0) --u.move_wait;
  const UnitStats& stats = StatsOf(u.type);
  const bool scan = (tick_ + u.serial) % kScanPeriod == 0;
  switch (u.order) {
    case Order::kIdle:
      // Idle units hit enemies in reach but do not chase.
      if (stats.attack > 0 && u.cooldown == 0 && scan) {
        const int e = NearestEnemy(slot, stats.range_sq);
        if (e >= 0) Hit(u, units_[e]);
      }
      break;
    case Order::kMove:
      if (u.attack_move && scan) {
        const int e = NearestEnemy(slot, stats.sight_sq);
        if (e >= 0) {
          u.order = Order::kAttack;
          u.target = static_cast<int16_t>(e);
          u.target_uid = units_[e].uid;
          u.use_field = false;
          break;
        }
      }
      if (u.x == u.tx && u.y == u.ty) {
        u.order = Order::kIdle;
      } else if (!Step(u, u.tx, u.ty) && u.move_wait == 0 && Chebyshev(u.x, u.y, u.tx, u.ty) <= 1 &&
                 !Free(u.tx, u.ty)) {
        u.order = Order::kIdle;  // the destination is taken; next to it is as good
      }
      break;
    case Order::kAttack:
      ActAttack(u);
      break;
    case Order::kGather:
      ActGather(u);
      break;
    case Order::kBuild:
      ActBuild(u);
      break;
    case Order::kProduce:
      ActProduce(u);
      break;
  }
}

void World::ActAttack(Unit& u) {
  const int t = u.target;
  if (t < 0 || units_[t].uid != u.target_uid || !units_[t].Alive()) {
    u.order = u.attack_move ? Order::kMove : Order::kIdle;
    u.use_field = false;
    return;
  }
  Unit& v = units_[t];
  const UnitStats& stats = StatsOf(u.type);
  // An attack-move aimed at a building turns to enemy units that come in sight.
  const int slot = static_cast<int>(&u - units_.data());
  if (u.attack_move && StatsOf(v.type).building && (tick_ + u.serial) % kScanPeriod == 0) {
    const int e = NearestEnemy(slot, stats.sight_sq);
    if (e >= 0 && !StatsOf(units_[e].type).building) {
      u.target = static_cast<int16_t>(e);
      u.target_uid = units_[e].uid;
      u.use_field = false;
      return;
    }
  }
  if (DistSq(u, v) <= stats.range_sq) {
    if (u.cooldown == 0) Hit(u, v);
  } else {
    Step(u, v.x, v.y);
  }
}

void World::Hit(Unit& u, Unit& target) {
  const UnitStats& stats = StatsOf(u.type);
  target.damage = static_cast<int16_t>(target.damage + stats.attack);
  damage_dealt_[u.player] += stats.attack;
  u.cooldown = static_cast<int16_t>(stats.cooldown);
}

void World::ActGather(Unit& u) {
  switch (u.phase) {
    case kToMine:
      if (map_.resources(u.tx, u.ty) == 0) {
        const int m = NearestMine(u.x, u.y, u.player);
        if (m < 0) {
          u.order = Order::kIdle;
          return;
        }
        u.tx = map_.mines()[m].x;
        u.ty = map_.mines()[m].y;
        u.use_field = false;
      }
      if (Chebyshev(u.x, u.y, u.tx, u.ty) <= 1) {
        u.phase = kMining;
        u.timer = kGatherTicks;
      } else {
        Step(u, u.tx, u.ty);
      }
      break;
    case kMining:
      if (--u.timer <= 0) {
        u.carry = static_cast<int8_t>(map_.Take(u.tx, u.ty, kCarry));
        u.phase = kToBase;
        u.use_field = false;
      }
      break;
    case kToBase: {
      const int b = base_slot_[u.player];
      if (b < 0) {
        u.order = Order::kIdle;
        return;
      }
      const Unit& base = units_[b];
      if (Chebyshev(u.x, u.y, base.x, base.y) <= 1) {
        resources_[u.player] += u.carry;
        u.carry = 0;
        u.phase = kToMine;
        u.use_field = false;
      } else {
        Step(u, base.x, base.y);
      }
      break;
    }
  }
}

void World::ActBuild(Unit& u) {
  if (u.phase == kToSite) {
    if (Chebyshev(u.x, u.y, u.tx, u.ty) <= 1) {
      u.phase = kConstructing;
      u.timer = static_cast<int16_t>(StatsOf(u.make).build_ticks);
    } else {
      Step(u, u.tx, u.ty);
    }
    return;
  }
  if (u.timer > 0 && --u.timer > 0) return;
  int x = u.tx, y = u.ty;
  if (!Free(x, y) && !FreeTileNear(u.tx, u.ty, 1, &x, &y, u.player == 0 ? 1 : -1)) return;  // wait for room
  Spawn(u.player, u.make, x, y);
  OrderGather(static_cast<int>(&u - units_.data()));
}

void World::ActProduce(Unit& u) {
  if (u.timer > 0 && --u.timer > 0) return;
  int x, y;
  if (!FreeTileNear(u.x, u.y, 2, &x, &y, u.player == 0 ? 1 : -1)) return;  // wait for room
  const int slot = Spawn(u.player, u.make, x, y);
  if (slot < 0) return;
  u.order = Order::kIdle;
  if (u.make == kWorker) OrderGather(slot);
}

bool World::Step(Unit& u, int gx, int gy) {
  const int period = StatsOf(u.type).move_period;
  if (u.move_wait > 0 || period == 0) return false;
  const int n = map_.size();
  const int sign = u.player == 0 ? 1 : -1;  // player 1 scans mirrored, so neither is favoured
  if (!u.use_field) {
    // Greedy: the free neighbour closest to the goal, if it gets closer.
    int best = (u.x - gx) * (u.x - gx) + (u.y - gy) * (u.y - gy), bx = -1, by = -1;
    for (int d = 0; d < 8; ++d) {
      const int nx = u.x + sign * kDx[d], ny = u.y + sign * kDy[d];
      if (!Free(nx, ny)) continue;
      const int dist = (nx - gx) * (nx - gx) + (ny - gy) * (ny - gy);
      if (dist < best) {
        best = dist;
        bx = nx;
        by = ny;
      }
    }
    if (bx >= 0) {
      MoveTo(u, bx, by);
      return true;
    }
    u.use_field = true;  // stuck behind rock or units: follow the terrain's distance field
  }
  const uint16_t* field = paths_.FieldTo(map_, gx, gy);
  const int here = field[u.y * n + u.x];
  int best = here, bx = -1, by = -1, side_x = -1, side_y = -1;
  const int rotate = (tick_ + u.serial) & 7;
  for (int k = 0; k < 8; ++k) {
    const int d = (k + rotate) & 7;
    const int nx = u.x + sign * kDx[d], ny = u.y + sign * kDy[d];
    if (!Free(nx, ny)) continue;
    const int value = field[ny * n + nx];
    if (value < best) {
      best = value;
      bx = nx;
      by = ny;
    } else if (value == here && side_x < 0) {
      side_x = nx;
      side_y = ny;
    }
  }
  if (bx < 0) {
    bx = side_x;
    by = side_y;
  }
  if (bx < 0) return false;
  MoveTo(u, bx, by);
  return true;
}

void World::MoveTo(Unit& u, int x, int y) {
  const int slot = occupancy_[map_.Index(u.x, u.y)];
  occupancy_[map_.Index(u.x, u.y)] = -1;
  occupancy_[map_.Index(x, y)] = static_cast<int16_t>(slot);
  u.x = static_cast<int16_t>(x);
  u.y = static_cast<int16_t>(y);
  u.move_wait = static_cast<int16_t>(StatsOf(u.type).move_period);
}

bool World::FreeTileNear(int x, int y, int max_ring, int* fx, int* fy, int sign) const {
  for (int ring = 1; ring <= max_ring; ++ring) {
    for (int dy = -ring; dy <= ring; ++dy) {
      for (int dx = -ring; dx <= ring; ++dx) {
        if (std::max(std::abs(dx), std::abs(dy)) != ring || !Free(x + sign * dx, y + sign * dy)) continue;
        *fx = x + sign * dx;
        *fy = y + sign * dy;
        return true;
      }
    }
  }
  return false;
}

int World::NearestMine(int x, int y, int player) const {
  const auto& mines = map_.mines();
  int best = -1, best_dist = 1 << 30;
  // Mines come in mirrored pairs (2k, 2k + 1): player 1 scans each pair the
  // other way round, so ties go to mirrored mines.
  for (int i = 0; i < static_cast<int>(mines.size()); ++i) {
    const int m = i ^ player;
    if (map_.resources(mines[m].x, mines[m].y) == 0) continue;
    const int dx = mines[m].x - x, dy = mines[m].y - y;
    if (dx * dx + dy * dy < best_dist) {
      best_dist = dx * dx + dy * dy;
      best = m;
    }
  }
  return best;
}

int World::NearestEnemy(int slot, int radius_sq, bool units_first) const {
  const Unit& u = units_[slot];
  int best = -1, best_rank = 1 << 30;
  for (int s = 0; s < end_; ++s) {
    const Unit& v = units_[s];
    if (!v.Alive() || v.player == u.player) continue;
    const int dist = DistSq(u, v);
    if (dist > radius_sq) continue;
    const int rank = dist + (units_first && StatsOf(v.type).building ? (1 << 20) : 0);
    if (rank < best_rank) {
      best_rank = rank;
      best = s;
    }
  }
  return best;
}

void World::OrderIdle(int slot) { units_[slot].order = Order::kIdle; }

void World::OrderMove(int slot, int x, int y, bool attack_move) {
  Unit& u = units_[slot];
  u.order = Order::kMove;
  u.tx = static_cast<int16_t>(x);
  u.ty = static_cast<int16_t>(y);
  u.attack_move = attack_move;
  u.use_field = false;
}

void World::OrderAttack(int slot, int target_slot, bool attack_move) {
  Unit& u = units_[slot];
  const Unit& v = units_[target_slot];
  u.order = Order::kAttack;
  u.target = static_cast<int16_t>(target_slot);
  u.target_uid = v.uid;
  u.tx = v.x;
  u.ty = v.y;
  u.attack_move = attack_move;
  u.use_field = false;
}

void World::OrderGather(int slot) {
  if (slot < 0) return;
  Unit& u = units_[slot];
  const int m = NearestMine(u.x, u.y, u.player);
  if (u.type != kWorker || m < 0) {
    u.order = Order::kIdle;
    return;
  }
  u.order = Order::kGather;
  u.phase = u.carry > 0 ? kToBase : kToMine;
  u.tx = map_.mines()[m].x;
  u.ty = map_.mines()[m].y;
  u.use_field = false;
}

void World::OrderGatherAt(int slot, int x, int y) {
  Unit& u = units_[slot];
  u.order = Order::kGather;
  u.phase = u.carry > 0 ? kToBase : kToMine;
  u.tx = static_cast<int16_t>(x);
  u.ty = static_cast<int16_t>(y);
  u.use_field = false;
}

int World::SlotOf(int32_t uid) const {
  if (uid <= 0) return -1;
  for (int s = 0; s < end_; ++s) {
    if (units_[s].uid == uid) return units_[s].Alive() ? s : -1;
  }
  return -1;
}

static int OwnedUnits(const int* counts) {
  int total = 0;
  for (int t = 0; t < kNumUnitTypes; ++t) total += counts[t];
  return total;
}

bool World::OrderBuild(int slot, UnitType type, int x, int y) {
  Unit& u = units_[slot];
  const int cost = StatsOf(type).cost;
  if (u.type != kWorker || !StatsOf(type).building || !map_.Passable(x, y)) return false;
  if (resources_[u.player] < cost || OwnedUnits(counts_[u.player]) >= kPlayerUnitCap) return false;
  resources_[u.player] -= cost;
  u.order = Order::kBuild;
  u.phase = kToSite;
  u.make = type;
  u.tx = static_cast<int16_t>(x);
  u.ty = static_cast<int16_t>(y);
  u.use_field = false;
  return true;
}

bool World::OrderProduce(int slot, UnitType type) {
  Unit& u = units_[slot];
  const bool can = (u.type == kBase && type == kWorker) || (u.type == kBarracks && (type == kMelee || type == kRanged));
  const int cost = StatsOf(type).cost;
  if (!can || u.order != Order::kIdle || resources_[u.player] < cost ||
      OwnedUnits(counts_[u.player]) >= kPlayerUnitCap) {
    return false;
  }
  resources_[u.player] -= cost;
  u.order = Order::kProduce;
  u.make = type;
  u.timer = static_cast<int16_t>(StatsOf(type).build_ticks);
  return true;
}

}  // namespace elf::minirts
