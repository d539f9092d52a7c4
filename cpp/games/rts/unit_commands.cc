#include "games/rts/unit_commands.h"

namespace elf::minirts {

namespace {

UnitCommandResult Build(World& world, int slot, const UnitCommand& command) {
  const Unit& u = world.unit(slot);
  if (command.type < 0 || command.type >= kNumUnitTypes) return kUnitResultCannot;
  const auto type = static_cast<UnitType>(command.type);
  const int cost = StatsOf(type).cost;
  if (u.type == kWorker) {
    const bool may = type == kBarracks || (type == kTower && world.variant() == Variant::kTowerDefense);
    if (!may) return kUnitResultCannot;
    if (!world.map().Inside(command.x, command.y)) return kUnitResultOffMap;
    if (!world.map().Passable(command.x, command.y)) return kUnitResultNotGround;
    if (world.resources(u.player) < cost) return kUnitResultCost;
    return world.OrderBuild(slot, type, command.x, command.y) ? kUnitResultDone : kUnitResultLimit;
  }
  const bool trains = (u.type == kBase && type == kWorker) ||
                      (u.type == kBarracks && (type == kMelee || type == kRanged));
  if (!trains) return kUnitResultCannot;
  if (u.order != Order::kIdle) return kUnitResultBusy;
  if (world.resources(u.player) < cost) return kUnitResultCost;
  return world.OrderProduce(slot, type) ? kUnitResultDone : kUnitResultLimit;
}

}  // namespace

UnitCommandResult ApplyUnitCommand(World& world, const Fog* fog, int player, const UnitCommand& command) {
  if (command.kind == kUnitNone) return kUnitResultNone;
  const int slot = world.SlotOf(command.unit);
  if (slot < 0) return kUnitResultNoUnit;
  const Unit& u = world.unit(slot);
  if (u.player != player) return kUnitResultNotOwned;
  if (world.variant() == Variant::kCaptureTheFlag && world.Carrying(slot)) return kUnitResultCarrier;
  const UnitStats& stats = StatsOf(u.type);
  switch (command.kind) {
    case kUnitStop:
      if (stats.move_period == 0) return kUnitResultCannot;
      world.OrderIdle(slot);
      return kUnitResultDone;
    case kUnitMove:
      if (stats.move_period == 0) return kUnitResultCannot;
      if (!world.map().Inside(command.x, command.y)) return kUnitResultOffMap;
      world.OrderMove(slot, command.x, command.y, /*attack_move=*/false);
      return kUnitResultDone;
    case kUnitAttack: {
      if (stats.attack == 0) return kUnitResultCannot;
      const int target = world.SlotOf(command.target);
      if (target < 0) return kUnitResultNoTarget;
      const Unit& v = world.unit(target);
      if (v.player == player || (fog != nullptr && !fog->Visible(player, v.x, v.y))) return kUnitResultNoTarget;
      world.OrderAttack(slot, target, /*attack_move=*/false);
      return kUnitResultDone;
    }
    case kUnitGather:
      if (u.type != kWorker) return kUnitResultCannot;
      if (!world.map().Inside(command.x, command.y)) return kUnitResultOffMap;
      if (world.map().terrain(command.x, command.y) != kMine || world.map().resources(command.x, command.y) == 0) {
        return kUnitResultNoMine;
      }
      world.OrderGatherAt(slot, command.x, command.y);
      return kUnitResultDone;
    case kUnitBuild:
      return Build(world, slot, command);
    default:
      return kUnitResultCannot;
  }
}

}  // namespace elf::minirts
