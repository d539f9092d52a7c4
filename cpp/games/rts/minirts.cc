// MiniRTS, the game the engine sees: one or two seats of Python agents
// choosing strategic commands (commands.h) every `frame_skip` ticks against a
// built-in AI (ai.h) or each other.
//   seats=1  Python plays player 0 (seat 0) against `opponent` as player 1.
//   seats=2  self-play: seat k is player k, both Python.
//   seats=0  spectator: `ai0` against `opponent`; the one seat observes
//            player 0 and its action is ignored (AI-vs-AI games, benchmarks).
// Built-in AIs decide every `ai_frame_skip` ticks, independently of the
// agents' `frame_skip`, so their strength does not depend on it.
// Reward: on the row that ends an episode r is exactly +1 (win) or -1 (loss;
// also for every Python seat when `max_tick` is reached: `timeout_reward`),
// 0 for a draw; so the win rate is the fraction of terminal rows with r > 0.
// With shaped_reward, other rows carry (damage dealt - damage taken) / 500.
// army_shaping and flag_shaping add the change of a potential over the step
// (other rows only, so the terminal row stays exactly +1 / -1):
// army_shaping x (own troops - enemy troops) + flag_shaping x (ctf: 1 while a
// troop of ours carries the enemy flag, minus 1 while the enemy carries ours).
// A potential's changes sum to its last value over an episode, so they guide
// without paying for anything the game does not. That is Ng et al.'s (1999)
// policy invariance for undiscounted returns only: the game knows no
// discount, and a learner discounting by gamma < 1 is paid gamma^t times each
// change, which favours reaching a high potential early (F = gamma Phi(s') -
// Phi(s) would be invariant under that discount).
// Reaching max_tick is a loss by the rules, so it is reported as terminated,
// not truncated. The observation `frames` counts the ticks each step ran, for
// frames-per-second figures; `won` marks the terminal rows of won episodes.
//
// Variants (option `variant`, rules in world.h): standard, ctf (capture the
// flag) and tower_defense (player 0 against waves; seats 0 or 1, the
// opponent is the waves). Each has its own features (features.h) and ctf
// and tower_defense their own command meanings (commands.h).
//
// A person's seat (option unit_commands=K > 0, seats 1 or 2): each Python
// seat also replies `u`, up to K per-unit commands a step (unit_commands.h:
// stop, move, attack, gather, build), carried out after its strategic
// command `a`; it observes `units` (what it sees, with each unit's uid) and
// `unit_results` (what became of its previous step's commands: a refused
// command changes nothing, and the game goes on). Off by default: the keys
// exist only with the option, so other users' specs are unchanged.
//
// Pictures and replays: with the option board=true, the observation `board`
// is one character per tile (features.h), the seat's view or, with
// board_fog=false or seats=0, the whole map. It is off by default, so models
// that read every observation do not take it as an input and games that are
// not drawn do not write it. Every
// episode starts from its own seed, `episode_seed`: the game is
// deterministic, so the options, that seed and the Python seats' actions
// replay an episode exactly (option episode_seed, examples/minirts_render.py).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "elf/game.h"
#include "elf/registry.h"
#include "games/rts/ai.h"
#include "games/rts/commands.h"
#include "games/rts/features.h"
#include "games/rts/fog.h"
#include "games/rts/unit_commands.h"
#include "games/rts/world.h"

namespace elf::games {

using namespace elf::minirts;  // NOLINT: this .cc file is the game's own

class MiniRTS : public Game {
 public:
  // The member initialisers (and Rules') are the options' defaults: DefineSpec reads them.
  struct Config {
    int map_size = 20;
    int max_tick = 6000;
    int frame_skip = 25;
    AIKind opponent = AIKind::kSimple;
    AIKind ai0 = AIKind::kSimple;
    int ai_frame_skip = 25;
    int seats = 1;
    bool shaped_reward = false;
    float timeout_reward = -1.0f;
    float army_shaping = 0.0f;
    float flag_shaping = 0.0f;
    Rules rules;
    bool board = false;
    bool board_fog = true;
    int64_t episode_seed = -1;
    int unit_commands = 0;
    Key<float> s, v;
    Key<int32_t> frames, won, units, unit_results;
    Key<uint8_t> board_key;
    Key<int64_t> episode_seed_key, a, u;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.map_size = spec.Option("map_size", config.map_size, "width and height of the square map, in tiles (10..64)");
    config.max_tick = spec.Option("max_tick", config.max_tick, "ticks before the game ends as a loss for Python seats");
    config.frame_skip = spec.Option("frame_skip", config.frame_skip, "ticks between two commands (one step)");
    config.opponent = ParseAI(spec.Option<std::string>("opponent", "simple",
                                                       "built-in AI of player 1: simple or hit_and_run "
                                                       "(tower_defense: unused, player 1 is the waves)"),
                              "opponent");
    config.ai0 = ParseAI(spec.Option<std::string>("ai0", "simple", "built-in AI of player 0 when seats=0"), "ai0");
    config.ai_frame_skip =
        spec.Option("ai_frame_skip", config.ai_frame_skip, "ticks between two decisions of a built-in AI");
    config.seats =
        spec.Option("seats", config.seats, "1: Python vs the opponent AI; 2: self-play; 0: AI vs AI, observed");
    config.shaped_reward =
        spec.Option("shaped_reward", config.shaped_reward, "add (damage dealt - taken) / 500 each step");
    config.timeout_reward =
        spec.Option("timeout_reward", config.timeout_reward, "reward of a Python seat when max_tick is reached");
    config.army_shaping = spec.Option(
        "army_shaping", config.army_shaping, "add this times the step's change in (own troops - enemy troops)");
    config.flag_shaping = spec.Option(
        "flag_shaping", config.flag_shaping,
        "ctf: add this times the step's change in (enemy flag carried by us - our flag carried by the enemy)");
    config.rules.variant = ParseVariant(
        spec.Option<std::string>("variant", "standard", "rules: standard, ctf (capture the flag) or tower_defense"),
        "variant");
    config.rules.waves =
        spec.Option("waves", config.rules.waves, "tower_defense: waves of enemy troops (wave k brings 2 + k)");
    config.rules.wave_period =
        spec.Option("wave_period", config.rules.wave_period, "tower_defense: ticks between two waves");
    config.rules.first_wave =
        spec.Option("first_wave", config.rules.first_wave, "tower_defense: tick of the first wave");
    config.board =
        spec.Option("board", config.board, "add the observation 'board' (one character per tile, for pictures)");
    config.board_fog =
        spec.Option("board_fog", config.board_fog, "board shows only what the seat sees (false: the whole map)");
    config.episode_seed = spec.Option<int64_t>(
        "episode_seed", config.episode_seed, "seed of every episode (map, AIs, tie-breaks); -1: a new one per episode");
    config.unit_commands = spec.Option(
        "unit_commands", config.unit_commands,
        "per-unit commands each Python seat may give a step (action 'u'; 0: strategic commands only)");
    if (config.map_size < kMinMapSize || config.map_size > kMaxMapSize) {
      throw std::invalid_argument("option 'map_size' must be in " + std::to_string(kMinMapSize) + ".." +
                                  std::to_string(kMaxMapSize) + ", got " + std::to_string(config.map_size));
    }
    if (config.seats < 0 || config.seats > 2) {
      throw std::invalid_argument("option 'seats' must be one of 0, 1, 2; got " + std::to_string(config.seats));
    }
    if (config.unit_commands < 0 || config.unit_commands > kMaxUnits) {
      throw std::invalid_argument("option 'unit_commands' must be in 0.." + std::to_string(kMaxUnits) + ", got " +
                                  std::to_string(config.unit_commands));
    }
    if (config.unit_commands > 0 && config.seats == 0) {
      throw std::invalid_argument("option 'unit_commands' needs a Python seat (seats 1 or 2); seats=0 has none");
    }
    if (config.max_tick < 1) throw std::invalid_argument("option 'max_tick' must be >= 1");
    if (config.frame_skip < 1) throw std::invalid_argument("option 'frame_skip' must be >= 1");
    if (config.ai_frame_skip < 1) throw std::invalid_argument("option 'ai_frame_skip' must be >= 1");
    if (config.rules.variant == Variant::kTowerDefense) {
      if (config.seats == 2) {
        throw std::invalid_argument("option 'seats': tower_defense has one player (0: built-in AI, 1: Python); got 2");
      }
      if (config.rules.waves < 1) throw std::invalid_argument("option 'waves' must be >= 1");
      if (config.rules.wave_period < 1) throw std::invalid_argument("option 'wave_period' must be >= 1");
      if (config.rules.first_wave < 0) throw std::invalid_argument("option 'first_wave' must be >= 0");
    }
    const int n = config.map_size;
    const FeatureLayout layout = LayoutOf(config.rules.variant);
    spec.Seats(config.seats == 2 ? 2 : 1);
    config.s = spec.Observation<float>("s", {layout.planes, n, n}, layout.planes_help);
    config.v = spec.Observation<float>("v", {layout.scalars}, layout.scalars_help);
    config.frames = spec.Observation<int32_t>(
        "frames", {}, "ticks the previous action ran for (frame_skip, fewer at the end; 0 on a game's first row)");
    if (config.board) config.board_key = spec.Observation<uint8_t>("board", {n, n}, kBoardHelp);
    // int32 rather than bool: generic wrappers (Gymnasium boxes) take signed types.
    config.won = spec.EpisodeStatistic<int32_t>(
        "won", {}, "on a terminal row: 1 if the seat's player won the episode that ended (0 elsewhere)");
    config.episode_seed_key =
        spec.Observation<int64_t>("episode_seed", {}, "seed of the current episode (replays it with episode_seed=)");
    config.a = spec.DiscreteAction("a", NumCommands(config.rules.variant), CommandHelp(config.rules.variant));
    if (config.unit_commands > 0) {
      const std::vector<int64_t> one = {kNumUnitCommandKinds, kUidRange, kUidRange, kMaxMapSize, kMaxMapSize,
                                        kNumUnitTypes};
      std::vector<int64_t> nvec;
      for (int k = 0; k < config.unit_commands; ++k) nvec.insert(nvec.end(), one.begin(), one.end());
      config.u = spec.MultiDiscreteAction("u", nvec, kUnitCommandHelp);
      config.units = spec.Observation<int32_t>("units", {kMaxUnits, kUnitColumns}, kUnitsHelp);
      config.unit_results = spec.Observation<int32_t>("unit_results", {config.unit_commands}, kUnitResultsHelp);
    }
    return config;
  }

  explicit MiniRTS(const Config& config)
      : config_(config),
        world_(config.map_size, config.rules),
        fog_(config.map_size),
        ai0_(config.ai0),
        ai1_(config.opponent),
        unit_results_(2 * config.unit_commands, kUnitResultNone) {}

  void Reset(Rng& rng) override {
    // Everything random in an episode comes from its own seed.
    episode_seed_ = config_.episode_seed >= 0 ? config_.episode_seed : static_cast<int64_t>(rng.Next() >> 1);
    Rng episode_rng(static_cast<uint64_t>(episode_seed_), 0);
    world_.Reset(episode_rng);
    fog_.Reset();
    fog_.Update(world_);
    ai0_.Reset(episode_rng);
    ai1_.Reset(episode_rng);
    rewards_[0] = rewards_[1] = 0.0f;
  }

  void Observe(int seat, const Row& row) override {
    WriteFeatures(world_, fog_, seat, config_.max_tick, row.Get(config_.s), row.Get(config_.v));
    *row.Get(config_.frames) = frames_;
    if (config_.board) {
      const bool observer = config_.seats == 0 || !config_.board_fog;
      WriteBoard(world_, fog_, observer ? -1 : seat, row.Get(config_.board_key));
    }
    *row.Get(config_.won) = won_[seat] ? 1 : 0;
    *row.Get(config_.episode_seed_key) = episode_seed_;
    if (config_.unit_commands > 0) {
      WriteUnits(world_, fog_, config_.board_fog ? seat : -1, row.Get(config_.units));
      std::copy_n(&unit_results_[seat * config_.unit_commands], config_.unit_commands, row.Get(config_.unit_results));
    }
  }

  Outcome Step(const std::vector<Row>& replies, Rng&) override {
    won_[0] = won_[1] = false;
    const bool ai_plays_0 = config_.seats == 0, ai_plays_1 = config_.seats < 2;
    for (int seat = 0; seat < config_.seats; ++seat) {
      ApplyCommand(world_, seat, static_cast<int>(replies[seat].Scalar(config_.a)));
      if (config_.unit_commands > 0) ApplyUnitCommands(seat, replies[seat].Get(config_.u));
    }
    const int dealt0 = world_.damage_dealt(0), dealt1 = world_.damage_dealt(1);
    const float potential_before[2] = {Potential(0), Potential(1)};
    const int tick_before = world_.tick();
    // The built-in AIs decide on their own clock, whatever the agents' frame_skip.
    for (int k = 0; k < config_.frame_skip && world_.winner() < 0 && world_.tick() < config_.max_tick; ++k) {
      const bool decide = world_.tick() % config_.ai_frame_skip == 0;
      if (ai_plays_0) {
        if (decide) ai0_.Decide(world_, 0);
        ai0_.Micro(world_, 0);
      }
      if (ai_plays_1) {
        if (decide) ai1_.Decide(world_, 1);
        ai1_.Micro(world_, 1);
      }
      world_.Tick();
    }
    frames_ = world_.tick() - tick_before;  // kept through the Reset that may follow
    fog_.Update(world_);
    const int winner = world_.winner();
    const bool timeout = winner < 0 && world_.tick() >= config_.max_tick;
    for (int player = 0; player < 2; ++player) {
      won_[player] = winner == player;  // kept through the Reset that follows
      if (winner >= 0) {
        rewards_[player] = winner == 2 ? 0.0f : (winner == player ? 1.0f : -1.0f);
      } else if (timeout) {
        rewards_[player] = config_.timeout_reward;
      } else if (config_.shaped_reward) {
        const int dealt = world_.damage_dealt(player) - (player == 0 ? dealt0 : dealt1);
        const int taken = world_.damage_dealt(1 - player) - (player == 0 ? dealt1 : dealt0);
        rewards_[player] = static_cast<float>(dealt - taken) / 500.0f + Potential(player) - potential_before[player];
      } else {
        rewards_[player] = Potential(player) - potential_before[player];
      }
    }
    Outcome outcome;
    outcome.terminated = winner >= 0 || timeout;
    return outcome;
  }

  float Reward(int seat) const override { return rewards_[seat]; }

 private:
  // Seat `seat` is player `seat`; it commands what it sees (the board's fog).
  void ApplyUnitCommands(int seat, const int64_t* fields) {
    for (int k = 0; k < config_.unit_commands; ++k) {
      const int64_t* f = fields + k * kNumUnitFields;
      UnitCommand command;
      command.kind = static_cast<int>(f[kFieldKind]);
      command.unit = static_cast<int32_t>(f[kFieldUnit]);
      command.target = static_cast<int32_t>(f[kFieldTarget]);
      command.x = static_cast<int>(f[kFieldX]);
      command.y = static_cast<int>(f[kFieldY]);
      command.type = static_cast<int>(f[kFieldType]);
      unit_results_[seat * config_.unit_commands + k] =
          ApplyUnitCommand(world_, config_.board_fog ? &fog_ : nullptr, seat, command);
    }
  }

  // The shaping potential of `player` (see the top of this file).
  float Potential(int player) const {
    const auto troops = [this](int p) { return world_.count(p, kMelee) + world_.count(p, kRanged); };
    float potential = config_.army_shaping * static_cast<float>(troops(player) - troops(1 - player));
    if (config_.rules.variant == Variant::kCaptureTheFlag) {
      potential += config_.flag_shaping * static_cast<float>(static_cast<int>(world_.flag(1 - player).Carried()) -
                                                             static_cast<int>(world_.flag(player).Carried()));
    }
    return potential;
  }

  Config config_;
  World world_;
  Fog fog_;
  BuiltinAI ai0_, ai1_;
  float rewards_[2] = {0.0f, 0.0f};
  bool won_[2] = {false, false};
  int frames_ = 0;
  int64_t episode_seed_ = 0;
  std::vector<int32_t> unit_results_;  // [seat][unit_commands]: the last step's, kept through a Reset
};

ELF_REGISTER_GAME("minirts", MiniRTS);

}  // namespace elf::games
