// Memory: a test of recall. The first observation of an episode shows a cue
// (one of `num_cues`, drawn at reset, one-hot); the next `delay` observations
// are blank; the last one carries only a query flag. The action taken at the
// query ends the episode and earns 1 if it names the cue, 0 otherwise; actions
// before the query do nothing. A policy without memory sees the same query
// whatever the cue, so it cannot beat 1 / num_cues; a recurrent one can reach 1.
#include <stdexcept>

#include "elf/game.h"
#include "elf/registry.h"

namespace elf::games {

class Memory : public Game {
 public:
  struct Config {
    int delay = 3;
    int num_cues = 2;
    Key<float> s;
    Key<int64_t> a;
  };

  static Config DefineSpec(SpecBuilder& spec) {
    Config config;
    config.delay = spec.Option("delay", 3, "blank steps between the cue and the query");
    config.num_cues = spec.Option("num_cues", 2, "number of distinct cues (and actions)");
    if (config.delay < 0) throw std::invalid_argument("option 'delay' must be >= 0");
    if (config.num_cues < 2) throw std::invalid_argument("option 'num_cues' must be >= 2");
    config.s = spec.Observation<float>("s", {config.num_cues + 1},
                                       "one-hot cue on the first step (else 0), then the query flag on the last");
    config.a = spec.DiscreteAction("a", config.num_cues, "at the query: the cue recalled; before it: ignored");
    return config;
  }

  explicit Memory(const Config& config) : config_(config) {}

  void Reset(Rng& rng) override {
    cue_ = static_cast<int>(rng.Below(config_.num_cues));
    step_ = 0;
    reward_ = 0.0f;
  }

  void Observe(int, const Row& row) override {
    float* s = row.Get(config_.s);
    for (int i = 0; i <= config_.num_cues; ++i) s[i] = 0.0f;
    if (step_ == 0) s[cue_] = 1.0f;
    if (step_ == QueryStep()) s[config_.num_cues] = 1.0f;
  }

  Outcome Step(const std::vector<Row>& replies, Rng&) override {
    const bool query = step_ == QueryStep();
    reward_ = query && replies[0].Scalar(config_.a) == cue_ ? 1.0f : 0.0f;
    ++step_;
    Outcome outcome;
    outcome.terminated = query;
    return outcome;
  }

  float Reward(int) const override { return reward_; }

 private:
  int QueryStep() const { return config_.delay + 1; }

  Config config_;
  int cue_ = 0;
  int step_ = 0;
  float reward_ = 0.0f;
};

ELF_REGISTER_GAME("memory", Memory);

}  // namespace elf::games
