#include "games/rts/ai.h"

#include <stdexcept>

#include "games/rts/commands.h"

namespace elf::minirts {

const std::vector<std::string>& AINames() {
  static const std::vector<std::string> names = {"simple", "hit_and_run"};
  return names;
}

AIKind ParseAI(const std::string& name, const std::string& option) {
  if (name == "simple") return AIKind::kSimple;
  if (name == "hit_and_run") return AIKind::kHitAndRun;
  std::string valid;
  for (const auto& known : AINames()) valid += (valid.empty() ? "" : ", ") + known;
  throw std::invalid_argument("option '" + option + "': unknown AI '" + name + "'; valid choices: " + valid);
}

void BuiltinAI::Reset(Rng& rng) {
  attacking_ = false;
  attack_at_ = kind_ == AIKind::kSimple ? 4 + static_cast<int>(rng.Below(3)) : 3 + static_cast<int>(rng.Below(2));
}

void BuiltinAI::Decide(World& world, int player) {
  if (world.variant() == Variant::kTowerDefense && player == 1) return;  // the waves play themselves
  if (world.count(player, kWorker) < 4) ApplyCommand(world, player, kCmdBuildWorker);
  ApplyCommand(world, player, kCmdGather);
  if (BarracksIncludingPending(world, player) == 0) ApplyCommand(world, player, kCmdBuildBarracks);
  const int melee = world.count(player, kMelee), ranged = world.count(player, kRanged);
  if (world.variant() == Variant::kTowerDefense) {
    // Defend only: the first two towers before troops, then troops first.
    const int towers = BuildingsIncludingPending(world, player, kTower);
    const int troop = kind_ == AIKind::kHitAndRun || melee >= 2 * (ranged + 1) ? kCmdBuildRanged : kCmdBuildMelee;
    if (towers < 2) ApplyCommand(world, player, kCmdBuildTower);
    ApplyCommand(world, player, troop);
    ApplyCommand(world, player, kCmdBuildTower);
    ApplyCommand(world, player, kCmdDefend);
    return;
  }
  if (kind_ == AIKind::kSimple) {
    ApplyCommand(world, player, melee < 2 * (ranged + 1) ? kCmdBuildMelee : kCmdBuildRanged);
    if (melee + ranged >= attack_at_) attacking_ = true;
    if (melee + ranged <= 1) attacking_ = false;
  } else {
    ApplyCommand(world, player, kCmdBuildRanged);
    if (ranged >= attack_at_) attacking_ = true;
    if (ranged == 0) attacking_ = false;
  }
  if (world.variant() == Variant::kCaptureTheFlag && !world.flag(player).AtHome()) {
    ApplyCommand(world, player, kCmdDefend);  // everyone after the own flag
  } else if (kind_ == AIKind::kSimple && attacking_) {
    ApplyCommand(world, player, kCmdAttack);
  } else if (!attacking_) {
    ApplyCommand(world, player, kCmdDefend);
  }
}

void BuiltinAI::Micro(World& world, int player) {
  if (kind_ != AIKind::kHitAndRun || !attacking_ || (world.tick() & 3) != 0) return;
  if (world.variant() == Variant::kTowerDefense) return;  // defends only
  const bool ctf = world.variant() == Variant::kCaptureTheFlag;
  if (ctf && !world.flag(player).AtHome()) return;  // Decide sends everyone after the flag
  const int enemy_base = world.base_slot(1 - player);
  const int home = world.base_slot(player);
  // ctf: troops with nothing in sight head for the enemy flag (home once carried).
  const Flag& goal_flag = world.flag(world.flag(1 - player).Carried() ? player : 1 - player);
  const int goal_x = goal_flag.Carried() ? goal_flag.home_x : goal_flag.x;
  const int goal_y = goal_flag.Carried() ? goal_flag.home_y : goal_flag.y;
  for (int s = 0; s < world.end(); ++s) {
    const Unit& u = world.unit(s);
    if (!u.Alive() || u.player != player || u.type != kRanged || world.Carrying(s)) continue;
    // Reloading with a melee unit close: step back toward home.
    int threat = -1;
    for (int e = 0; e < world.end() && threat < 0; ++e) {
      const Unit& v = world.unit(e);
      if (v.Alive() && v.player != player && v.type == kMelee && world.DistSq(u, v) <= 8) threat = e;
    }
    if (threat >= 0 && u.cooldown > 0 && home >= 0) {
      const Unit& v = world.unit(threat);
      const int away_x = u.x + (u.x > v.x) - (u.x < v.x), away_y = u.y + (u.y > v.y) - (u.y < v.y);
      if (world.Free(away_x, away_y)) {
        world.OrderMove(s, away_x, away_y, false);
      } else {
        world.OrderMove(s, world.unit(home).x, world.unit(home).y, false);
      }
      continue;
    }
    int target = world.NearestEnemy(s, StatsOf(kRanged).sight_sq);
    if (ctf && target >= 0 && StatsOf(world.unit(target).type).building) target = -1;  // the flag first
    if (target >= 0) {
      if (u.order != Order::kAttack || u.target != target) world.OrderAttack(s, target, false);
    } else if (ctf) {
      if (u.order != Order::kMove || u.tx != goal_x || u.ty != goal_y) world.OrderMove(s, goal_x, goal_y, true);
    } else if (enemy_base >= 0 && !(u.order == Order::kAttack && u.attack_move)) {
      world.OrderAttack(s, enemy_base, true);
    }
  }
}

MatchResult PlayMatch(World& world, BuiltinAI& ai0, BuiltinAI& ai1, Rng& rng, int max_tick, int decide_every) {
  world.Reset(rng);
  ai0.Reset(rng);
  ai1.Reset(rng);
  while (world.winner() < 0 && world.tick() < max_tick) {
    if (world.tick() % decide_every == 0) {
      ai0.Decide(world, 0);
      ai1.Decide(world, 1);
    }
    ai0.Micro(world, 0);
    ai1.Micro(world, 1);
    world.Tick();
  }
  return {world.winner(), world.tick()};
}

}  // namespace elf::minirts
