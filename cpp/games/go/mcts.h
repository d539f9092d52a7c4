// Monte Carlo tree search with a policy-value evaluator (AlphaZero's PUCT),
// driven from outside: Select hands out up to k leaves at once (virtual loss
// steers later descents away from leaves still in flight), the caller has
// them evaluated however it likes (a batched network call through the
// engine), and Expand backs each one up. No evaluator is called from here, so
// a search never blocks and many searches can share one batch.
//
// Selection at a node picks the edge maximising
//   Q(a) + c_puct * P(a) * sqrt(sum_b N(b)) / (1 + N(a))
// where N counts finished visits plus leaves in flight through the edge, and
// Q(a) = (W(a) - virtual_loss * in_flight(a)) / N(a) is the mean value for the
// player choosing a (each leaf in flight counts as a loss of `virtual_loss`);
// an unvisited edge's Q is the node's own evaluation minus `fpu_reduction`.
// At the root the priors are mixed with Dirichlet noise:
//   P(a) <- (1 - noise_fraction) * P(a) + noise_fraction * Dir(alpha)_a.
// A position where the game is over is valued exactly (the Tromp-Taylor
// result) and backed up at once. Advance keeps the subtree of the move
// played (tree reuse). Not thread-safe: one search per game.
#pragma once

#include <cstdint>
#include <vector>

#include "elf/rng.h"
#include "games/go/board.h"

namespace elf::go {

struct SearchConfig {
  float c_puct = 1.5f;
  float virtual_loss = 1.0f;
  float fpu_reduction = 0.2f;
  float dirichlet_alpha = 0.0f;  // <= 0: no root noise
  float noise_fraction = 0.25f;
  float komi = kDefaultKomi;
  // The pass is searched only when every other legal move fills one of the
  // mover's own single-point eyes, so games are played out to a settled board
  // (self-play: a young network's early passes lose games it need not lose,
  // and a side that always passes teaches the value head nothing).
  bool pass_only_when_done = false;
};

// A position waiting for its evaluation.
struct Leaf {
  int node = -1;
  std::vector<int> path;  // edges from the root
  Board board;
  std::vector<uint8_t> legal;  // board's legal moves
};

class Search {
 public:
  explicit Search(SearchConfig config) : config_(config) {}

  // Starts a fresh tree at `root`.
  void Reset(const Board& root);
  const Board& root_board() const { return root_board_; }
  // Descends up to `max_leaves` times; appends the leaves found to `leaves`
  // (an end-of-game position is backed up at once instead). Stops early when
  // a descent meets a leaf already in flight. Returns the leaves appended.
  int Select(int max_leaves, std::vector<Leaf>* leaves);
  // Backs up the evaluation of `leaf`: `policy` over the board's actions
  // (renormalised over the legal ones; uniform if they sum to 0) and `value`
  // in [-1, 1] for the side to move at the leaf. Throws std::invalid_argument
  // for a negative or non-finite prior or value.
  void Expand(const Leaf& leaf, const float* policy, float value, Rng& rng);
  // Simulations backed up since the last Reset or Advance.
  int simulations() const { return simulations_; }
  bool root_expanded() const { return nodes_[0].expanded; }
  int in_flight() const { return in_flight_; }
  // The root's visit counts per action, divided by their sum.
  void VisitDistribution(float* out) const;
  int Visits(int action) const;
  float Prior(int action) const;  // the root's prior for `action` (0 if illegal)
  // The move to play: the most visited with temperature <= 0, else sampled
  // with probability proportional to N(a)^(1 / temperature).
  int ChooseMove(float temperature, Rng& rng) const;
  // Mean value of the root for its side to move.
  float RootValue() const;
  // Plays `action` at the root; its subtree becomes the tree. Needs no leaf
  // in flight.
  void Advance(int action, Rng& rng);
  // Whether the root's priors get Dirichlet noise (when the config has any)
  // from the next Reset or Advance on: off for the fast searches of playout
  // cap randomisation, whose moves only advance the game.
  void set_root_noise(bool on) { root_noise_ = on; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }

 private:
  struct Node {
    int first_edge = 0;
    int num_edges = 0;
    bool expanded = false;
    bool in_flight = false;
    bool over = false;
    float over_value = 0;  // for the side to move, when over
    float evaluation = 0;  // the evaluator's value, for the side to move
  };
  struct Edge {
    int action = 0;
    float prior = 0;
    int child = -1;
    int visits = 0;
    int in_flight = 0;
    float value_sum = 0;  // for the player choosing this edge
  };

  int NewNode(const Board& board);
  int Choose(const Node& node) const;
  void Backup(const std::vector<int>& path, float value);
  void AddNoise(Rng& rng);
  int CopySubtree(int node, std::vector<Node>& nodes, std::vector<Edge>& edges) const;

  SearchConfig config_;
  Board root_board_;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  int simulations_ = 0;
  int in_flight_ = 0;
  bool root_noised_ = false;
  bool root_noise_ = true;
};

}  // namespace elf::go
