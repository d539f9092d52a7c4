// "go": the rules of Go (board.h) as a game with one seat that plays both
// colours, the move it is sent being the side to move's. Reward at the end of
// a game: +1 if black won, -1 if white won, 0 for a draw (Tromp-Taylor area
// score with komi); 0 before. An illegal move is an error naming the move, or
// with the option illegal_move_loses (for tools that try any action of the
// space, such as Gymnasium's env checker) ends the game as lost by its mover.
// For tree search see go_mcts.cc; this game serves players that pick moves
// themselves, rule checks and GTP.
#include "elf/game.h"
#include "elf/registry.h"
#include "games/go/board.h"
#include "games/go/options.h"

namespace elf::games {

class Go : public Game {
 public:
  struct Config {
    go::BoardOptions board;
    bool illegal_move_loses = false;
    Key<uint8_t> s, legal, stones;
    Key<int32_t> to_move;
    Key<float> score;
    Key<int64_t> a;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.board = go::DefineBoardOptions(spec);
    config.illegal_move_loses = spec.Option("illegal_move_loses", false,
                                            "an illegal move ends the game, lost by its mover, instead of an error");
    const int64_t n = config.board.size;
    config.s = spec.Observation<uint8_t>("s", {go::kFeaturePlanes, n, n}, go::kFeaturesMeaning);
    config.legal = spec.Observation<uint8_t>("legal", {n * n + 1}, "1 where the move is legal (last: pass)");
    config.stones = spec.Observation<uint8_t>("stones", {n, n}, "0 empty, 1 black, 2 white; row 0 is the top");
    config.to_move = spec.Observation<int32_t>("to_move", {}, "1 black, 2 white");
    config.score = spec.Observation<float>("score", {}, "Tromp-Taylor score now: black area - white area - komi");
    config.a = spec.DiscreteAction("a", n * n + 1, "the move: row * size + column, or size * size to pass");
    return config;
  }

  explicit Go(const Config& config) : config_(config), board_(config.board.size) {}

  void Reset(Rng&) override {
    board_ = go::NewBoard(config_.board);
    lost_by_ = go::kEmpty;
  }

  void Observe(int, const Row& row) override {
    board_.Features(row.Get(config_.s));
    board_.LegalMask(row.Get(config_.legal));
    uint8_t* stones = row.Get(config_.stones);
    const int n = board_.size();
    for (int i = 0; i < n * n; ++i) stones[i] = board_.AtAction(i);
    *row.Get(config_.to_move) = board_.to_move();
    *row.Get(config_.score) = board_.Score(config_.board.komi);
  }

  Outcome Step(const std::vector<Row>& replies, Rng&) override {
    const int move = static_cast<int>(replies[0].Scalar(config_.a));
    if (config_.illegal_move_loses && !board_.IsLegal(move)) {
      lost_by_ = board_.to_move();
      return {true, false};
    }
    board_.Play(move);
    return {board_.Over(), false};
  }

  float Reward(int) const override {
    if (lost_by_ != go::kEmpty) return lost_by_ == go::kBlack ? -1.0f : 1.0f;
    if (!board_.Over()) return 0.0f;
    const float score = board_.Score(config_.board.komi);
    return score > 0 ? 1.0f : score < 0 ? -1.0f : 0.0f;
  }

 private:
  Config config_;
  go::Board board_;
  go::Color lost_by_ = go::kEmpty;  // the side whose illegal move ended the game (illegal_move_loses)
};

ELF_REGISTER_GAME("go", Go);

}  // namespace elf::games
