// "go_mcts": self-play Go where each move is chosen by tree search (mcts.h)
// whose leaves are evaluated by whoever answers the game's tag. The game has
// `leaves` seats: each engine step, seat k sends the position of the search's
// k-th leaf in flight (`s`, `legal`) and reads back its evaluation (`policy`,
// `value`, declared here as Box actions); seats without a leaf this step send
// the root and their reply is ignored. Once `playouts` simulations have been
// backed up since the last move, the game plays a move (sampled with
// `temperature` for the first `temperature_moves` moves, then the most
// visited) and keeps its subtree.
//
// Playout cap randomisation (KataGo; Wu 2019), on when `fast_playouts` > 0:
// each move is searched fully (`playouts`, root noise) with probability
// `full_search_fraction`, else quickly (`fast_playouts`, no noise). Only full
// searches give a policy target: a fast one reports its move with visits all
// zero. The games so finish several times faster for the same targets.
//
// Seat 0 also reports the move played in the step just before (`move` >= 0,
// or -2 for a resignation; -1 when none): the root position (`root_s`), the
// visit distribution (`visits`), who played it (`player`: +1 black, -1
// white) and the root's value for the mover. Reward, at a game's end: +1 if
// black won, -1 if white won, 0 for a draw; so the outcome for a record is
// r * player on the next terminal row. A side resigns when the root value
// falls below `resign_threshold` (-1, the default: never), except in a `resign_check` fraction of
// games, played out to the end, whose terminal row tells whether the side
// that would have resigned lost (`resign_check` 1) or won (2: a false alarm).
//
// With `external_moves` the game also takes the reply `play` (seat 0's; 0:
// none, a + 1: action a): a move made outside, by an opponent such as another
// GTP program, played at the root in that step before the search goes on, so
// that a match keeps the subtree of both sides' moves (elfpy.gtp). The move
// must be legal; otherwise the step fails with an error naming it. It also
// takes `move_now` (seat 0's; 1: end this move's search now): the move is
// played from the visits so far (at least the root's priors) instead of at
// `playouts`, so that a player on a clock stops when its time is spent.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "elf/game.h"
#include "elf/registry.h"
#include "games/go/board.h"
#include "games/go/mcts.h"
#include "games/go/options.h"

namespace elf::games {

class GoMcts : public Game {
 public:
  static constexpr int64_t kNoMove = -1;
  static constexpr int64_t kResign = -2;

  // The member initialisers are the options' defaults (DefineSpec reads them), but for dirichlet_alpha and
  // temperature_moves, whose defaults follow the board size.
  struct Config {
    go::BoardOptions board;
    go::SearchConfig search;
    int playouts = 100;
    int fast_playouts = 0;
    float full_search_fraction = 0.25f;
    int leaves = 8;
    float temperature = 1.0f;
    int temperature_moves = 0;
    // Resignation is off unless asked for: a threshold is safe only once the network's values are (false_resign,
    // from the resign_check games, says when), and from the start -0.9 let self-play collapse into resigning at
    // once (docs/results/2026-11-28-go.md). The GTP engine and play.search take this default too, so that a match
    // is scored to its end unless its command line asks otherwise.
    float resign_threshold = -1.0f;
    float resign_check = 0.1f;
    bool reuse_tree = true;
    bool external_moves = false;
    Key<uint8_t> s, legal, root_s;
    Key<int64_t> move, play, move_now;
    Key<float> visits, player, root_value, policy, value;
    Key<int32_t> resign_check_key;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.board = go::DefineBoardOptions(spec);
    const int64_t n = config.board.size;
    config.search.komi = config.board.komi;
    config.playouts = spec.Option("playouts", config.playouts, "simulations per move");
    config.fast_playouts = spec.Option("fast_playouts", config.fast_playouts,
                                       "simulations of a fast search (playout cap randomisation; 0: off)");
    config.full_search_fraction = spec.Option("full_search_fraction", config.full_search_fraction,
                                              "with fast_playouts: the fraction of moves searched fully");
    config.leaves = spec.Option("leaves", config.leaves, "leaves in flight per search (one seat each)");
    go::SearchConfig& search = config.search;
    search.c_puct = spec.Option("c_puct", search.c_puct, "exploration constant of PUCT");
    search.virtual_loss = spec.Option("virtual_loss", search.virtual_loss, "value a leaf in flight counts as lost");
    search.fpu_reduction =
        spec.Option("fpu_reduction", search.fpu_reduction, "unvisited moves: parent value minus this");
    search.dirichlet_alpha =
        spec.Option("dirichlet_alpha", static_cast<float>(10.0 / (n * n)), "root noise concentration (0: none)");
    search.noise_fraction = spec.Option("noise_fraction", search.noise_fraction, "weight of the root noise");
    search.pass_only_when_done =
        spec.Option("pass_only_when_done", search.pass_only_when_done,
                    "search the pass only when every other legal move fills an own single-point eye");
    config.temperature =
        spec.Option("temperature", config.temperature, "move sampling temperature for the opening moves");
    config.temperature_moves =
        spec.Option("temperature_moves", static_cast<int>(n * n / 10), "moves sampled with temperature");
    config.resign_threshold =
        spec.Option("resign_threshold", config.resign_threshold, "resign below this root value (-1: never)");
    config.resign_check =
        spec.Option("resign_check", config.resign_check, "fraction of games played out to check resignation");
    config.reuse_tree = spec.Option("reuse_tree", config.reuse_tree, "keep the subtree of the move played");
    config.external_moves = spec.Option("external_moves", config.external_moves,
                                        "also take moves made outside through the reply 'play'");
    if (config.playouts < 1) throw std::invalid_argument("option 'playouts' must be >= 1");
    if (config.fast_playouts < 0 || config.fast_playouts > config.playouts) {
      throw std::invalid_argument("option 'fast_playouts' must be in [0, playouts]");
    }
    if (config.full_search_fraction < 0 || config.full_search_fraction > 1) {
      throw std::invalid_argument("option 'full_search_fraction' must be in [0, 1]");
    }
    if (config.leaves < 1) throw std::invalid_argument("option 'leaves' must be >= 1");
    if (config.temperature_moves < 0) throw std::invalid_argument("option 'temperature_moves' must be >= 0");
    if (go::NewBoard(config.board).Over()) throw std::invalid_argument("option 'moves': the game is already over");
    spec.Seats(config.leaves);
    config.s = spec.Observation<uint8_t>("s", {go::kFeaturePlanes, n, n}, std::string("the leaf's ") +
                                                                              go::kFeaturesMeaning);
    config.legal = spec.Observation<uint8_t>("legal", {n * n + 1}, "the leaf's legal moves (last: pass)");
    config.move = spec.Observation<int64_t>("move", {}, "seat 0: move played last step (-1 none, -2 resign)");
    config.root_s = spec.Observation<uint8_t>("root_s", {go::kFeaturePlanes, n, n}, "seat 0: that move's root");
    config.visits = spec.Observation<float>("visits", {n * n + 1}, "seat 0: that move's visit distribution");
    config.player = spec.Observation<float>("player", {}, "seat 0: who played it, +1 black, -1 white");
    config.root_value = spec.Observation<float>("root_value", {}, "seat 0: the root's value for the mover");
    config.resign_check_key = spec.Observation<int32_t>(
        "resign_check", {}, "seat 0, terminal row: 1 would-be resigner lost, 2 it won (false alarm), 0 n/a");
    config.policy = spec.ContinuousAction("policy", {n * n + 1}, 0.0, 1.0, "the leaf's move probabilities");
    config.value = spec.ContinuousAction("value", {}, -1.0, 1.0, "the leaf's value for its side to move");
    if (config.external_moves) {
      config.play = spec.DiscreteAction("play", n * n + 2, "seat 0: a move made outside to play now (0: none, a + 1: "
                                                           "action a)");
      config.move_now = spec.DiscreteAction("move_now", 2, "seat 0: 1 ends this move's search now (0: at playouts)");
    }
    return config;
  }

  explicit GoMcts(const Config& config)
      : config_(config), search_(config.search), visits_(config.board.size * config.board.size + 1),
        root_s_(go::kFeaturePlanes * config.board.size * config.board.size) {}

  void Reset(Rng& rng) override {
    ChooseSearchSize(rng);
    search_.Reset(go::NewBoard(config_.board));
    playing_out_ = rng.Uniform() < config_.resign_check;
    would_resign_ = go::kEmpty;
    resigned_ = go::kEmpty;
    leaves_.clear();
    SelectLeaves(rng);
  }

  void Observe(int seat, const Row& row) override {
    const bool has_leaf = seat < static_cast<int>(leaves_.size());
    const go::Board& board = has_leaf ? leaves_[seat].board : search_.root_board();
    board.Features(row.Get(config_.s));
    if (has_leaf) {
      std::copy(leaves_[seat].legal.begin(), leaves_[seat].legal.end(), row.Get(config_.legal));
    } else {
      board.LegalMask(row.Get(config_.legal));
    }
    const bool report = seat == 0 && record_move_ != kNoMove;
    *row.Get(config_.move) = seat == 0 ? record_move_ : kNoMove;
    *row.Get(config_.resign_check_key) = seat == 0 ? resign_outcome_ : 0;
    if (!report) return;
    std::copy(visits_.begin(), visits_.end(), row.Get(config_.visits));
    std::copy(root_s_.begin(), root_s_.end(), row.Get(config_.root_s));
    *row.Get(config_.player) = record_player_;
    *row.Get(config_.root_value) = record_value_;
  }

  Outcome Step(const std::vector<Row>& replies, Rng& rng) override {
    for (std::size_t k = 0; k < leaves_.size(); ++k) {
      search_.Expand(leaves_[k], replies[k].Get(config_.policy), replies[k].Scalar(config_.value), rng);
    }
    leaves_.clear();
    record_move_ = kNoMove;
    resign_outcome_ = 0;
    bool move_now = false;  // only the search under way ends early, not the next move's
    if (config_.external_moves) {
      const int64_t play = replies[0].Scalar(config_.play);
      if (play > 0 && PlayExternalMove(static_cast<int>(play - 1), rng)) return {true, false};
      move_now = replies[0].Scalar(config_.move_now) == 1;
    }
    bool moved = false;
    while (leaves_.empty()) {
      if (search_.root_expanded() && (search_.simulations() >= playouts_ || move_now)) {
        if (moved) break;  // one record per step: send this one first (a step without leaves)
        moved = true;
        move_now = false;
        if (PlayMove(rng)) return {true, false};
        continue;
      }
      SelectLeaves(rng);
    }
    return {false, false};
  }

  float Reward(int) const override {
    if (resigned_ != go::kEmpty) return resigned_ == go::kBlack ? -1.0f : 1.0f;
    const float score = search_.root_board().Score(config_.board.komi);
    return score > 0 ? 1.0f : score < 0 ? -1.0f : 0.0f;
  }

 private:
  void SelectLeaves(Rng&) { search_.Select(config_.leaves, &leaves_); }

  // Full or fast search for the next move (playout cap randomisation).
  void ChooseSearchSize(Rng& rng) {
    full_search_ = config_.fast_playouts == 0 || rng.Uniform() < config_.full_search_fraction;
    playouts_ = full_search_ ? config_.playouts : config_.fast_playouts;
    search_.set_root_noise(full_search_);
  }

  // Plays a move made outside (no record: this game's search did not choose it); true if the game ended.
  bool PlayExternalMove(int action, Rng& rng) {
    if (!search_.root_board().IsLegal(action)) {
      throw std::invalid_argument("go_mcts: the move made outside, action " + std::to_string(action) +
                                  ", is illegal after " + std::to_string(search_.root_board().moves_played()) +
                                  " moves");
    }
    ChooseSearchSize(rng);
    Advance(action, rng);
    return search_.root_board().Over();
  }

  void Advance(int action, Rng& rng) {
    if (config_.reuse_tree) {
      search_.Advance(action, rng);
    } else {
      go::Board next = search_.root_board();
      next.Play(action);
      search_.Reset(next);
    }
  }

  // Records the search's result, then plays its move; true if the game ended.
  bool PlayMove(Rng& rng) {
    const go::Board& root = search_.root_board();
    const go::Color mover = root.to_move();
    if (full_search_) {
      search_.VisitDistribution(visits_.data());
    } else {
      std::fill(visits_.begin(), visits_.end(), 0.0f);  // no policy target
    }
    root.Features(root_s_.data());
    record_player_ = mover == go::kBlack ? 1.0f : -1.0f;
    record_value_ = search_.RootValue();
    if (config_.resign_threshold > -1.0f && record_value_ < config_.resign_threshold) {
      if (!playing_out_) {
        record_move_ = kResign;
        resigned_ = mover;
        return true;
      }
      if (would_resign_ == go::kEmpty) would_resign_ = mover;
    }
    const float temperature = root.moves_played() < config_.temperature_moves ? config_.temperature : 0.0f;
    const int action = search_.ChooseMove(temperature, rng);
    record_move_ = action;
    ChooseSearchSize(rng);
    Advance(action, rng);
    if (!search_.root_board().Over()) return false;
    if (would_resign_ != go::kEmpty) {
      const float won = Reward(0) * (would_resign_ == go::kBlack ? 1.0f : -1.0f);
      resign_outcome_ = won > 0 ? 2 : 1;
    }
    return true;
  }

  Config config_;
  go::Search search_;
  std::vector<go::Leaf> leaves_;
  bool full_search_ = true;
  int playouts_ = 0;  // simulations for this move
  bool playing_out_ = false;
  go::Color would_resign_ = go::kEmpty;
  go::Color resigned_ = go::kEmpty;
  // The record of the move played last step, sent once by seat 0.
  int64_t record_move_ = kNoMove;
  int32_t resign_outcome_ = 0;
  std::vector<float> visits_;
  std::vector<uint8_t> root_s_;
  float record_player_ = 0;
  float record_value_ = 0;
};

ELF_REGISTER_GAME("go_mcts", GoMcts);

}  // namespace elf::games
