// MiniRTS per-unit commands (cpp/games/rts/unit_commands.h): each kind carried
// out, each refusal named and changing nothing, and the game's seat that
// replies them (option unit_commands) with its units and results observed.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "check.h"
#include "elf/registry.h"
#include "games/rts/features.h"
#include "games/rts/fog.h"
#include "games/rts/unit_commands.h"
#include "games/rts/world.h"

using namespace elf::minirts;

namespace {

World NewWorld() {
  World world(20);
  elf::Rng rng(7, 0);
  world.Reset(rng);
  return world;
}

// Player 0's first unit of `type`.
int FirstOf(const World& world, UnitType type, int player = 0) {
  for (int s = 0; s < world.end(); ++s) {
    if (world.unit(s).Alive() && world.unit(s).player == player && world.unit(s).type == type) return s;
  }
  return -1;
}

// A free ground tile within 3 tiles of the centre.
void FreeTile(const World& world, int* x, int* y) {
  for (int r = 7; r <= 13; ++r) {
    for (int c = 7; c <= 13; ++c) {
      if (world.Free(c, r) && world.Free(c + 1, r)) {
        *x = c;
        *y = r;
        return;
      }
    }
  }
  REQUIRE(false);
}

UnitCommand Command(int kind, const World& world, int slot) {
  UnitCommand command;
  command.kind = kind;
  command.unit = world.unit(slot).uid;
  return command;
}

}  // namespace

TEST(a_moved_worker_walks_to_its_tile_and_stays) {
  World world = NewWorld();
  const int worker = FirstOf(world, kWorker);
  UnitCommand move = Command(kUnitMove, world, worker);
  FreeTile(world, &move.x, &move.y);
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, move), kUnitResultDone);
  for (int t = 0; t < 400 && world.unit(worker).order == Order::kMove; ++t) world.Tick();
  CHECK_EQ(world.unit(worker).x, move.x);
  CHECK_EQ(world.unit(worker).y, move.y);
  CHECK(world.unit(worker).order == Order::kIdle);  // it no longer gathers
  for (int t = 0; t < 100; ++t) world.Tick();
  CHECK_EQ(world.unit(worker).x, move.x);
}

TEST(attack_hits_an_enemy_in_sight_and_refuses_one_out_of_sight) {
  World world = NewWorld();
  Fog fog(20);
  int x, y;
  FreeTile(world, &x, &y);
  const int own = world.Spawn(0, kMelee, x, y);
  const int near = world.Spawn(1, kWorker, x + 1, y);
  const int far = FirstOf(world, kBase, 1);
  world.unit(near).order = Order::kIdle;
  fog.Update(world);
  UnitCommand attack = Command(kUnitAttack, world, own);
  attack.target = world.unit(far).uid;
  CHECK_EQ(ApplyUnitCommand(world, &fog, 0, attack), kUnitResultNoTarget);  // in the fog
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, attack), kUnitResultDone);   // an observer's seat sees it
  attack.target = world.unit(own).uid;
  CHECK_EQ(ApplyUnitCommand(world, &fog, 0, attack), kUnitResultNoTarget);  // its own unit
  const int32_t near_uid = world.unit(near).uid;
  attack.target = near_uid;
  CHECK_EQ(ApplyUnitCommand(world, &fog, 0, attack), kUnitResultDone);
  CHECK_EQ(world.unit(own).target_uid, near_uid);
  for (int t = 0; t < 200 && world.SlotOf(near_uid) >= 0; ++t) world.Tick();
  CHECK_EQ(world.SlotOf(near_uid), -1);  // killed
  CHECK_EQ(ApplyUnitCommand(world, &fog, 0, attack), kUnitResultNoTarget);  // a dead uid names nobody
  UnitCommand base_attacks = Command(kUnitAttack, world, FirstOf(world, kBase));
  base_attacks.target = world.unit(far).uid;
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, base_attacks), kUnitResultCannot);  // a base cannot hit
}

TEST(gather_goes_to_the_chosen_mine_not_the_nearest) {
  World world = NewWorld();
  const int worker = FirstOf(world, kWorker);
  // The mine farthest from the worker that still has resources.
  const Map::Tile* chosen = nullptr;
  int best = -1;
  for (const auto& mine : world.map().mines()) {
    const int d = Chebyshev(mine.x, mine.y, world.unit(worker).x, world.unit(worker).y);
    if (d > best) {
      best = d;
      chosen = &mine;
    }
  }
  UnitCommand gather = Command(kUnitGather, world, worker);
  gather.x = chosen->x;
  gather.y = chosen->y;
  const int before = world.map().resources(gather.x, gather.y);
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, gather), kUnitResultDone);
  for (int t = 0; t < 600 && world.map().resources(gather.x, gather.y) == before; ++t) world.Tick();
  CHECK_EQ(world.map().resources(gather.x, gather.y), before - kCarry);
  CHECK(world.unit(worker).order == Order::kGather);
  gather.x = world.unit(worker).x;  // where it stands: ground, no mine
  gather.y = world.unit(worker).y;
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, gather), kUnitResultNoMine);
  int x, y;
  FreeTile(world, &x, &y);
  UnitCommand melee_gathers = Command(kUnitGather, world, world.Spawn(0, kMelee, x, y));
  melee_gathers.x = chosen->x;
  melee_gathers.y = chosen->y;
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, melee_gathers), kUnitResultCannot);
}

TEST(build_makes_a_barracks_at_the_site_and_trains_units_at_a_cost) {
  World world = NewWorld();
  world.set_resources(0, StatsOf(kBarracks).cost + StatsOf(kWorker).cost);
  const int worker = FirstOf(world, kWorker);
  UnitCommand build = Command(kUnitBuild, world, worker);
  build.type = kBarracks;
  FreeTile(world, &build.x, &build.y);
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, build), kUnitResultDone);
  CHECK_EQ(world.resources(0), StatsOf(kWorker).cost);  // paid now
  for (int t = 0; t < 600 && world.count(0, kBarracks) == 0; ++t) world.Tick();
  REQUIRE(world.count(0, kBarracks) == 1);
  const Unit& barracks = world.unit(FirstOf(world, kBarracks));
  CHECK(Chebyshev(barracks.x, barracks.y, build.x, build.y) <= 1);
  world.set_resources(0, StatsOf(kWorker).cost);
  UnitCommand train = Command(kUnitBuild, world, world.base_slot(0));
  train.type = kWorker;
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, train), kUnitResultDone);
  CHECK_EQ(world.resources(0), 0);
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, train), kUnitResultBusy);
  train.type = kMelee;  // a base trains workers only
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, train), kUnitResultCannot);
  UnitCommand troop = Command(kUnitBuild, world, FirstOf(world, kBarracks));
  troop.type = kMelee;
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, troop), kUnitResultCost);
  CHECK(world.unit(FirstOf(world, kBarracks)).order == Order::kIdle);
  build.unit = world.unit(FirstOf(world, kWorker)).uid;
  build.type = kTower;  // towers only in tower_defense
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, build), kUnitResultCannot);
}

TEST(refused_commands_name_the_mistake_and_change_nothing) {
  World world = NewWorld();
  const int worker = FirstOf(world, kWorker);
  const Unit before = world.unit(worker);
  const int resources = world.resources(0);
  UnitCommand move = Command(kUnitMove, world, worker);
  move.x = 20;  // a 20x20 map: 0..19
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, move), kUnitResultOffMap);
  move.x = 5;
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 1, move), kUnitResultNotOwned);  // player 1 commands player 0's worker
  move.unit = 9999;
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, move), kUnitResultNoUnit);
  move.unit = 0;
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, move), kUnitResultNoUnit);
  UnitCommand base_moves = Command(kUnitMove, world, world.base_slot(0));
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, base_moves), kUnitResultCannot);
  UnitCommand build = Command(kUnitBuild, world, worker);
  build.type = kBarracks;
  build.x = world.map().mines()[0].x;
  build.y = world.map().mines()[0].y;
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, build), kUnitResultNotGround);
  FreeTile(world, &build.x, &build.y);
  world.set_resources(0, StatsOf(kBarracks).cost - 1);
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, build), kUnitResultCost);
  CHECK_EQ(world.resources(0), StatsOf(kBarracks).cost - 1);
  world.set_resources(0, resources);
  const Unit& after = world.unit(worker);
  CHECK(after.order == before.order);
  CHECK_EQ(after.tx, before.tx);
  CHECK_EQ(after.ty, before.ty);
  UnitCommand none;
  CHECK_EQ(ApplyUnitCommand(world, nullptr, 0, none), kUnitResultNone);
}

TEST(the_game_seat_replies_unit_commands_and_observes_units_and_results) {
  using Options = std::map<std::string, std::string>;
  auto spec = [](Options values) { return elf::Registry::Global().Spec("minirts", elf::Options(values)); };
  bool has_u = false;
  for (const auto& key : spec({}).keys) has_u = has_u || key.name == "u" || key.name == "units";
  CHECK(!has_u);  // off by default: the spec other users see is unchanged
  CHECK_THROWS(spec({{"unit_commands", "2"}, {"seats", "0"}}), std::invalid_argument, "needs a Python seat");
  CHECK_THROWS(spec({{"unit_commands", "-1"}}), std::invalid_argument, "0..160");

  const Options values = {{"unit_commands", "2"}, {"frame_skip", "4"}};
  const elf::Options options(values);
  const elf::GameSpec game_spec = spec(values);
  const elf::KeySpec* u = nullptr;
  for (const auto& key : game_spec.keys) u = key.name == "u" ? &key : u;
  REQUIRE(u != nullptr);
  CHECK_EQ(u->shape, (std::vector<int64_t>{2 * kNumUnitFields}));
  CHECK_EQ(u->space.nvec[kFieldX], int64_t{kMaxMapSize});  // the game, not the engine, refuses off this map
  std::unique_ptr<elf::Game> game = elf::Registry::Global().Find("minirts").make(options);
  const elf::RecordLayout layout(game_spec.keys, std::vector<bool>(game_spec.keys.size(), true));
  std::vector<uint64_t> record(layout.bytes() / 8 + 1);
  elf::Row row(&game_spec.keys, &layout);
  row.Point(reinterpret_cast<uint8_t*>(record.data()));
  elf::Rng rng(3, 0);
  game->Reset(rng);
  game->Observe(0, row);
  const int32_t* units = row.Get<int32_t>("units");
  // The first own worker, and an enemy uid (the seat cannot see any yet).
  int worker_row = -1;
  for (int r = 0; r < kMaxUnits && worker_row < 0; ++r) {
    if (units[r * kUnitColumns + kColPlayer] == 0 && units[r * kUnitColumns + kColType] == kWorker) worker_row = r;
  }
  REQUIRE(worker_row >= 0);
  for (int r = 0; r < kMaxUnits; ++r) CHECK(units[r * kUnitColumns + kColPlayer] == 0);  // the fog hides player 1
  const int32_t uid = units[worker_row * kUnitColumns + kColUid];
  const int x0 = units[worker_row * kUnitColumns + kColX], y0 = units[worker_row * kUnitColumns + kColY];
  int64_t* a = row.Get<int64_t>("u");
  *row.Get<int64_t>("a") = 0;
  const int64_t move[kNumUnitFields] = {kUnitMove, uid, 0, 10, 10, 0};
  const int64_t unknown[kNumUnitFields] = {kUnitMove, uid + 1000, 0, 30, 10, 0};
  std::copy_n(move, kNumUnitFields, a);
  std::copy_n(unknown, kNumUnitFields, a + kNumUnitFields);
  game->Step({row}, rng);
  game->Observe(0, row);
  const int32_t* results = row.Get<int32_t>("unit_results");
  CHECK_EQ(results[0], int32_t{kUnitResultDone});
  CHECK_EQ(results[1], int32_t{kUnitResultNoUnit});
  std::fill(a, a + 2 * kNumUnitFields, 0);
  for (int step = 0; step < 10; ++step) {
    game->Step({row}, rng);
    game->Observe(0, row);
  }
  CHECK_EQ(row.Get<int32_t>("unit_results")[0], int32_t{kUnitResultNone});
  int x = -1, y = -1;
  for (int r = 0; r < kMaxUnits; ++r) {
    if (units[r * kUnitColumns + kColUid] == uid) {
      x = units[r * kUnitColumns + kColX];
      y = units[r * kUnitColumns + kColY];
    }
  }
  CHECK(Chebyshev(x, y, 10, 10) < Chebyshev(x0, y0, 10, 10));  // on its way to (10, 10)
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
