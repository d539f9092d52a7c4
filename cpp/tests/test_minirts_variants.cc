// MiniRTS variants (cpp/games/rts, rules in world.h): capture the flag's
// pick-up, drop, return and capture; tower defense's waves, towers and both
// ways to end; their features, commands, options and board characters; and
// a soak of built-in AI games in each variant.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "check.h"
#include "elf/registry.h"
#include "games/rts/ai.h"
#include "games/rts/commands.h"
#include "games/rts/features.h"
#include "games/rts/fog.h"
#include "games/rts/world.h"

using namespace elf::minirts;

namespace {

World NewWorld(Variant variant, int size = 20, int seed = 7) {
  Rules rules;
  rules.variant = variant;
  World world(size, rules);
  elf::Rng rng(seed, 0);
  world.Reset(rng);
  return world;
}

// A free tile next to (x, y), or REQUIRE fails.
void FreeNeighbour(const World& world, int x, int y, int* fx, int* fy) {
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) {
      if ((dx != 0 || dy != 0) && world.Free(x + dx, y + dy)) {
        *fx = x + dx;
        *fy = y + dy;
        return;
      }
    }
  }
  REQUIRE(false);
}

// Player 0's melee unit placed next to player 1's flag.
int RaiderAtEnemyFlag(World& world) {
  const Flag& flag = world.flag(1);
  int x, y;
  FreeNeighbour(world, flag.x, flag.y, &x, &y);
  const int slot = world.Spawn(0, kMelee, x, y);
  REQUIRE(slot >= 0);
  return slot;
}

void KillAll(World& world, int player) {
  for (int s = 0; s < world.end(); ++s) {
    Unit& u = world.unit(s);
    if (u.Alive() && u.player == player) u.hp = 0;
  }
}

}  // namespace

TEST(ctf_flags_stand_behind_the_bases) {
  World world = NewWorld(Variant::kCaptureTheFlag);
  const int n = world.map().size();
  CHECK_EQ(world.flag(0).x, 1);
  CHECK_EQ(world.flag(0).y, 1);
  CHECK_EQ(world.flag(1).x, n - 2);
  CHECK_EQ(world.flag(1).y, n - 2);
  CHECK(world.flag(0).AtHome() && world.flag(1).AtHome());
}

TEST(ctf_a_troop_next_to_the_enemy_flag_carries_it_home_and_wins) {
  World world = NewWorld(Variant::kCaptureTheFlag);
  const int raider = RaiderAtEnemyFlag(world);
  world.Tick();
  CHECK_EQ(world.flag(1).carrier, raider);
  CHECK(world.Carrying(raider));
  CHECK(world.unit(raider).order == Order::kMove);  // heads home by itself
  ApplyCommand(world, 0, kCmdDefend);                // commands leave a carrier alone
  CHECK(world.unit(raider).order == Order::kMove);
  CHECK_EQ(world.unit(raider).tx, world.flag(0).home_x);
  for (int t = 0; t < 1000 && world.winner() < 0; ++t) {
    world.Tick();
    if (world.winner() < 0) {
      CHECK_EQ(world.flag(1).x, world.unit(raider).x);  // the flag moves with its carrier
    }
  }
  CHECK_EQ(world.winner(), 0);
  CHECK(world.base_slot(1) >= 0);  // won by the flag, not by the base
  CHECK(Chebyshev(world.unit(raider).x, world.unit(raider).y, world.flag(0).home_x, world.flag(0).home_y) <= 1);
}

TEST(ctf_workers_do_not_pick_up_flags) {
  World world = NewWorld(Variant::kCaptureTheFlag);
  const Flag& flag = world.flag(1);
  int x, y;
  FreeNeighbour(world, flag.x, flag.y, &x, &y);
  const int worker = world.Spawn(0, kWorker, x, y);
  REQUIRE(worker >= 0);
  world.OrderIdle(worker);
  world.Tick();
  CHECK(world.flag(1).AtHome());
}

TEST(ctf_a_dead_carrier_drops_the_flag_and_its_owner_returns_it) {
  World world = NewWorld(Variant::kCaptureTheFlag);
  const int raider = RaiderAtEnemyFlag(world);
  world.Tick();
  REQUIRE(world.flag(1).carrier == raider);
  for (int t = 0; t < 40; ++t) world.Tick();  // carried some way
  const int drop_x = world.unit(raider).x, drop_y = world.unit(raider).y;
  world.unit(raider).hp = 0;
  world.Tick();
  CHECK(!world.flag(1).Carried());
  CHECK(!world.flag(1).AtHome());
  CHECK_EQ(world.flag(1).x, drop_x);
  CHECK_EQ(world.flag(1).y, drop_y);
  // Player 1's defend command sends its troops to the dropped flag; one of
  // them next to it returns it home.
  int x, y;
  FreeNeighbour(world, drop_x, drop_y, &x, &y);
  const int defender = world.Spawn(1, kMelee, x, y);
  REQUIRE(defender >= 0);
  world.OrderIdle(defender);
  world.Tick();
  CHECK(world.flag(1).AtHome());
  CHECK_EQ(world.winner(), -1);
}

TEST(ctf_an_enemy_picks_up_a_dropped_flag_again) {
  World world = NewWorld(Variant::kCaptureTheFlag);
  const int raider = RaiderAtEnemyFlag(world);
  world.Tick();
  for (int t = 0; t < 40; ++t) world.Tick();
  const int drop_x = world.unit(raider).x, drop_y = world.unit(raider).y;
  world.unit(raider).hp = 0;
  world.Tick();
  int x, y;
  FreeNeighbour(world, drop_x, drop_y, &x, &y);
  const int second = world.Spawn(0, kRanged, x, y);
  REQUIRE(second >= 0);
  world.Tick();
  CHECK_EQ(world.flag(1).carrier, second);
}

TEST(ctf_features_and_board_show_the_flags) {
  World world = NewWorld(Variant::kCaptureTheFlag);
  const int n = world.map().size(), area = n * n;
  Fog fog(n);
  fog.Update(world);
  const FeatureLayout layout = LayoutOf(Variant::kCaptureTheFlag);
  CHECK_EQ(layout.planes, kNumCtfPlanes);
  std::vector<float> s(layout.planes * area), v(layout.scalars);
  WriteFeatures(world, fog, 0, 6000, s.data(), v.data());
  CHECK_EQ(s[kPlaneOwnFlag * area + 1 * n + 1], 1.0f);
  CHECK_EQ(s[kPlaneEnemyFlag * area + (n - 2) * n + (n - 2)], 1.0f);  // known through the fog
  CHECK_EQ(v[kScalarOwnFlag], 0.0f);
  // Player 1 sees its own flag top-left too.
  WriteFeatures(world, fog, 1, 6000, s.data(), v.data());
  CHECK_EQ(s[kPlaneOwnFlag * area + 1 * n + 1], 1.0f);
  const int raider = RaiderAtEnemyFlag(world);
  world.Tick();
  fog.Update(world);
  WriteFeatures(world, fog, 0, 6000, s.data(), v.data());
  CHECK_EQ(v[kScalarEnemyFlag], 1.0f);
  std::vector<uint8_t> board(area);
  WriteBoard(world, fog, -1, board.data());
  CHECK_EQ(board[world.unit(raider).y * n + world.unit(raider).x], static_cast<uint8_t>('C'));
  CHECK_EQ(board[1 * n + 1], static_cast<uint8_t>('F'));
}

TEST(ctf_simple_ai_captures_flags_against_itself) {
  Rules rules;
  rules.variant = Variant::kCaptureTheFlag;
  World world(20, rules);
  elf::Rng rng(3, 0);
  int wins[3] = {0, 0, 0}, by_flag = 0;
  for (int g = 0; g < 100; ++g) {
    BuiltinAI a(AIKind::kSimple), b(AIKind::kSimple);
    const MatchResult result = PlayMatch(world, a, b, rng, 6000, 25);
    if (result.winner >= 0) ++wins[result.winner];
    by_flag += (result.winner == 0 || result.winner == 1) && world.base_slot(1 - result.winner) >= 0;
  }
  std::printf("ctf simple vs simple, 100 games: player 0 won %d, player 1 %d, draws %d; %d by the flag\n", wins[0],
              wins[1], wins[2], by_flag);
  CHECK(wins[0] >= 25 && wins[1] >= 25);
  CHECK(by_flag >= 50);  // the flag, not the base, decides most games
}

TEST(tower_defense_player_1_starts_empty_and_waves_come_on_time) {
  World world = NewWorld(Variant::kTowerDefense);
  CHECK_EQ(world.count(0, kBase), 1);
  CHECK_EQ(world.count(0, kWorker), kStartWorkers);
  for (int t = 0; t < kNumUnitTypes; ++t) CHECK_EQ(world.count(1, t), 0);
  const Rules& rules = world.rules();
  while (world.tick() < rules.first_wave - 1) world.Tick();
  CHECK_EQ(world.waves_spawned(), 0);
  world.Tick();
  CHECK_EQ(world.waves_spawned(), 1);
  CHECK_EQ(world.count(1, kMelee) + world.count(1, kRanged), 2);
  KillAll(world, 1);  // so the base stands until the next wave
  while (world.tick() < rules.first_wave + rules.wave_period - 1) world.Tick();
  CHECK_EQ(world.winner(), -1);
  CHECK_EQ(world.waves_spawned(), 1);
  world.Tick();
  CHECK_EQ(world.waves_spawned(), 2);
  CHECK_EQ(world.count(1, kMelee) + world.count(1, kRanged), 3);  // wave k brings 2 + k
}

TEST(tower_defense_an_undefended_base_falls) {
  World world = NewWorld(Variant::kTowerDefense);
  while (world.winner() < 0 && world.tick() < 6000) world.Tick();
  CHECK_EQ(world.winner(), 1);
  CHECK(world.base_slot(0) < 0);
}

TEST(tower_defense_clearing_the_last_wave_wins) {
  Rules rules;
  rules.variant = Variant::kTowerDefense;
  rules.waves = 2;
  rules.first_wave = 10;
  rules.wave_period = 10;
  World world(20, rules);
  elf::Rng rng(7, 0);
  world.Reset(rng);
  for (int t = 0; t < 100 && world.waves_spawned() < 1; ++t) world.Tick();
  KillAll(world, 1);
  world.Tick();
  CHECK_EQ(world.winner(), -1);  // one wave still to come
  for (int t = 0; t < 100 && world.waves_spawned() < 2; ++t) world.Tick();
  CHECK_EQ(world.winner(), -1);
  KillAll(world, 1);
  world.Tick();
  CHECK_EQ(world.winner(), 0);
}

TEST(tower_defense_towers_are_built_and_shoot_what_comes_in_range) {
  World world = NewWorld(Variant::kTowerDefense);
  world.set_resources(0, 1000);
  CHECK_EQ(NumCommands(Variant::kTowerDefense), kNumCommands + 1);
  ApplyCommand(world, 0, kCmdBuildTower);
  CHECK_EQ(world.resources(0), 1000 - StatsOf(kTower).cost);
  for (int t = 0; t < 400 && world.count(0, kTower) == 0; ++t) world.Tick();
  REQUIRE(world.count(0, kTower) == 1);
  int tower = -1;
  for (int s = 0; s < world.end(); ++s) tower = world.unit(s).Alive() && world.unit(s).type == kTower ? s : tower;
  const Unit& t = world.unit(tower);
  int x, y;
  FreeNeighbour(world, t.x, t.y, &x, &y);
  const int enemy = world.Spawn(1, kWorker, x, y);
  REQUIRE(enemy >= 0);
  world.OrderIdle(enemy);
  for (int k = 0; k < 100 && world.unit(enemy).uid != 0; ++k) world.Tick();
  CHECK_EQ(world.unit(enemy).uid, 0);
  CHECK(world.damage_dealt(0) >= StatsOf(kWorker).hp);
  // Towers are a tower_defense command only.
  World standard = NewWorld(Variant::kStandard);
  standard.set_resources(0, 1000);
  ApplyCommand(standard, 0, kCmdBuildTower);
  CHECK_EQ(standard.resources(0), 1000);
}

TEST(tower_defense_the_simple_ai_holds_some_games_and_loses_some) {
  Rules rules;
  rules.variant = Variant::kTowerDefense;
  World world(20, rules);
  elf::Rng rng(5, 0);
  int wins[2] = {0, 0}, towers_built = 0;
  for (int g = 0; g < 60; ++g) {
    BuiltinAI defender(AIKind::kSimple), unused(AIKind::kSimple);
    const MatchResult result = PlayMatch(world, defender, unused, rng, 6000, 25);
    REQUIRE(result.winner == 0 || result.winner == 1);
    ++wins[result.winner];
    towers_built += world.count(0, kTower) > 0;
  }
  std::printf("tower_defense simple defender, 60 games: held %d, fell %d\n", wins[0], wins[1]);
  CHECK(wins[0] >= 10 && wins[1] >= 5);
  CHECK(towers_built > 0);
}

TEST(variant_options_specs_and_errors) {
  auto spec = [](std::map<std::string, std::string> values) {
    return elf::Registry::Global().Spec("minirts", elf::Options(values));
  };
  auto key = [](const elf::GameSpec& s, const std::string& name) {
    for (const auto& k : s.keys) {
      if (k.name == name) return k;
    }
    REQUIRE(false);
    return s.keys[0];
  };
  const elf::GameSpec ctf = spec({{"variant", "ctf"}});
  CHECK_EQ(key(ctf, "s").shape, (std::vector<int64_t>{kNumCtfPlanes, 20, 20}));
  CHECK_EQ(key(ctf, "v").shape, (std::vector<int64_t>{kNumCtfScalars}));
  CHECK(key(ctf, "a").bounds->second == kNumCommands - 1);
  const elf::GameSpec td = spec({{"variant", "tower_defense"}, {"map_size", "16"}, {"board", "true"}});
  CHECK_EQ(key(td, "s").shape, (std::vector<int64_t>{kNumTowerDefensePlanes, 16, 16}));
  CHECK(key(td, "a").bounds->second == kNumCommands);
  CHECK_EQ(key(td, "board").shape, (std::vector<int64_t>{16, 16}));
  for (const auto& k : ctf.keys) CHECK(k.name != "board");  // only when asked for
  CHECK_THROWS(spec({{"variant", "koth"}}), std::invalid_argument, "valid choices: standard, ctf, tower_defense");
  CHECK_THROWS(spec({{"variant", "tower_defense"}, {"seats", "2"}}), std::invalid_argument, "one player");
  CHECK_THROWS(spec({{"variant", "tower_defense"}, {"waves", "0"}}), std::invalid_argument, "waves");
}

TEST(board_hides_what_the_player_does_not_see) {
  World world = NewWorld(Variant::kStandard);
  const int n = world.map().size();
  Fog fog(n);
  fog.Update(world);
  std::vector<uint8_t> full(n * n), mine(n * n);
  WriteBoard(world, fog, -1, full.data());
  WriteBoard(world, fog, 0, mine.data());
  const Unit& base1 = world.unit(world.base_slot(1));
  const Unit& base0 = world.unit(world.base_slot(0));
  CHECK_EQ(full[base1.y * n + base1.x], static_cast<uint8_t>('b'));
  CHECK_EQ(full[base0.y * n + base0.x], static_cast<uint8_t>('B'));
  CHECK_EQ(mine[base0.y * n + base0.x], static_cast<uint8_t>('B'));
  CHECK_EQ(mine[base1.y * n + base1.x], static_cast<uint8_t>(kUnseenChar));
  int rock = 0, mines = 0;
  for (int i = 0; i < n * n; ++i) {
    rock += full[i] == '#';
    mines += full[i] == '$';
  }
  CHECK(rock > 0);
  CHECK_EQ(mines, 6);
  // A scout that saw the far corner and died: the corner shows as seen
  // terrain under the fog bit, without player 1's units.
  const int scout = world.Spawn(0, kWorker, base1.x - 2, base1.y - 2);
  REQUIRE(scout >= 0);
  fog.Update(world);
  world.unit(scout).hp = 0;
  world.Tick();
  fog.Update(world);
  WriteBoard(world, fog, 0, mine.data());
  const uint8_t corner = mine[base1.y * n + base1.x];
  CHECK((corner & kFogBit) != 0);
  CHECK_EQ(static_cast<char>(corner & 0x7F), '.');
}

TEST(soak_variants_with_built_in_ais) {
  const int games = elf::testing::Scaled(600, 10);
  const Variant variants[2] = {Variant::kCaptureTheFlag, Variant::kTowerDefense};
  for (Variant variant : variants) {
    for (int size : {20, 12, 32}) {
      Rules rules;
      rules.variant = variant;
      World world(size, rules);
      elf::Rng rng(13, size);
      int outcomes[4] = {0, 0, 0, 0};
      for (int g = 0; g < games / 3; ++g) {
        BuiltinAI a(g & 1 ? AIKind::kHitAndRun : AIKind::kSimple), b(g & 2 ? AIKind::kHitAndRun : AIKind::kSimple);
        const MatchResult result = PlayMatch(world, a, b, rng, 6000, 25);
        ++outcomes[result.winner < 0 ? 3 : result.winner];
        int alive = 0, counted = 0;
        for (int s = 0; s < world.end(); ++s) {
          const Unit& u = world.unit(s);
          if (!u.Alive()) continue;
          ++alive;
          CHECK_EQ(world.occupant(u.x, u.y), s);
        }
        for (int p = 0; p < 2; ++p) {
          for (int t = 0; t < kNumUnitTypes; ++t) counted += world.count(p, t);
        }
        CHECK_EQ(alive, counted);
        if (variant == Variant::kCaptureTheFlag) {
          for (int p = 0; p < 2; ++p) {
            const Flag& flag = world.flag(p);
            CHECK(world.map().Inside(flag.x, flag.y));
            if (flag.Carried()) CHECK_EQ(world.unit(flag.carrier).uid, flag.carrier_uid);
          }
        }
      }
      std::printf("%s map %d: player 0 won %d, player 1 won %d, draws %d, timeouts %d\n", VariantName(variant), size,
                  outcomes[0], outcomes[1], outcomes[2], outcomes[3]);
      CHECK(outcomes[0] > 0 && outcomes[1] > 0);
    }
  }
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
