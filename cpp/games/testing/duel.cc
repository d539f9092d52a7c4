// Duel: a two-seat game for testing seats. Each step both seats pick a number
// in [0, 3); the higher pick earns +1 and the lower -1 (0 each on a tie). Each
// seat observes its own seat index, its opponent's last pick and the round.
// An episode lasts `rounds` steps.
#include "elf/game.h"
#include "elf/registry.h"

namespace elf::games {

class Duel : public Game {
 public:
  struct Config {
    int rounds = 10;
    Key<float> s;
    Key<int64_t> a;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.rounds = spec.Option("rounds", 10, "steps per episode");
    spec.Seats(2);
    config.s = spec.Observation<float>("s", {3}, "(own seat, opponent's last pick, round)");
    config.a = spec.DiscreteAction("a", 3, "a pick; the higher pick wins the round");
    return config;
  }

  explicit Duel(const Config& config) : config_(config) {}

  void Reset(Rng&) override {
    round_ = 0;
    picks_[0] = picks_[1] = -1;
  }

  void Observe(int seat, const Row& row) override {
    float* s = row.Get(config_.s);
    s[0] = static_cast<float>(seat);
    s[1] = static_cast<float>(picks_[1 - seat]);
    s[2] = static_cast<float>(round_);
  }

  Outcome Step(const std::vector<Row>& replies, Rng&) override {
    for (int seat = 0; seat < 2; ++seat) picks_[seat] = replies[seat].Scalar(config_.a);
    ++round_;
    Outcome outcome;
    outcome.terminated = round_ >= config_.rounds;
    return outcome;
  }

  float Reward(int seat) const override {
    const int64_t mine = picks_[seat], theirs = picks_[1 - seat];
    return mine > theirs ? 1.0f : (mine < theirs ? -1.0f : 0.0f);
  }

 private:
  Config config_;
  int round_ = 0;
  int64_t picks_[2] = {-1, -1};
};

ELF_REGISTER_GAME("duel", Duel);

}  // namespace elf::games
