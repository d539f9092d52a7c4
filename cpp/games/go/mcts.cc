// PUCT tree search with leaves in flight (see mcts.h).
#include "games/go/mcts.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace elf::go {
namespace {

// The result of a finished game for the side to move: +1 win, -1 loss, 0 draw.
float ResultFor(const Board& board, float komi) {
  const float score = board.Score(komi);
  const float black = score > 0 ? 1.0f : score < 0 ? -1.0f : 0.0f;
  return board.to_move() == kBlack ? black : -black;
}

double Normal(Rng& rng) {
  const double u = 1.0 - rng.Uniform();  // (0, 1]
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * rng.Uniform());
}

// Gamma(alpha, 1) by Marsaglia and Tsang; alpha < 1 through
// Gamma(alpha + 1) * U^(1 / alpha).
double Gamma(double alpha, Rng& rng) {
  if (alpha < 1.0) return Gamma(alpha + 1.0, rng) * std::pow(1.0 - rng.Uniform(), 1.0 / alpha);
  const double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = Normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - rng.Uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

}  // namespace

void Search::Reset(const Board& root) {
  root_board_ = root;
  nodes_.clear();
  edges_.clear();
  NewNode(root_board_);
  simulations_ = 0;
  in_flight_ = 0;
  root_noised_ = false;
}

int Search::NewNode(const Board& board) {
  Node node;
  if (board.Over()) {
    node.over = true;
    node.over_value = ResultFor(board, config_.komi);
  }
  nodes_.push_back(node);
  return static_cast<int>(nodes_.size()) - 1;
}

int Search::Choose(const Node& node) const {
  int parent_visits = 0;
  float visited_prior = 0;
  for (int e = node.first_edge; e < node.first_edge + node.num_edges; ++e) {
    parent_visits += edges_[e].visits + edges_[e].in_flight;
    if (edges_[e].visits + edges_[e].in_flight > 0) visited_prior += edges_[e].prior;
  }
  const float explore = config_.c_puct * std::sqrt(static_cast<float>(std::max(1, parent_visits)));
  const float first_play = node.evaluation - config_.fpu_reduction * std::sqrt(visited_prior);
  int best = node.first_edge;
  float best_score = -1e30f;
  for (int e = node.first_edge; e < node.first_edge + node.num_edges; ++e) {
    const Edge& edge = edges_[e];
    const int n = edge.visits + edge.in_flight;
    const float q = n > 0 ? (edge.value_sum - config_.virtual_loss * edge.in_flight) / n : first_play;
    const float score = q + explore * edge.prior / (1 + n);
    if (score > best_score) {
      best_score = score;
      best = e;
    }
  }
  return best;
}

int Search::Select(int max_leaves, std::vector<Leaf>* leaves) {
  int found = 0;
  for (int attempt = 0; attempt < max_leaves; ++attempt) {
    Leaf leaf;
    leaf.board = root_board_;
    int node = 0;
    while (nodes_[node].expanded && !nodes_[node].over) {
      const int e = Choose(nodes_[node]);
      leaf.path.push_back(e);
      leaf.board.Play(edges_[e].action);
      if (edges_[e].child < 0) {
        const int child = NewNode(leaf.board);
        edges_[e].child = child;
      }
      node = edges_[e].child;
    }
    if (nodes_[node].over) {
      Backup(leaf.path, nodes_[node].over_value);
      ++simulations_;
      continue;
    }
    if (nodes_[node].in_flight) break;  // collision: the tree has no fresh leaf to offer now
    nodes_[node].in_flight = true;
    for (int e : leaf.path) ++edges_[e].in_flight;
    ++in_flight_;
    leaf.node = node;
    leaf.legal.resize(leaf.board.num_actions());
    leaf.board.LegalMask(leaf.legal.data());
    if (config_.pass_only_when_done && leaf.board.HasMoveBesidesEyes()) leaf.legal[leaf.board.pass()] = 0;
    leaves->push_back(std::move(leaf));
    ++found;
  }
  return found;
}

void Search::Expand(const Leaf& leaf, const float* policy, float value, Rng& rng) {
  if (!std::isfinite(value) || value < -1.0f || value > 1.0f) {
    throw std::invalid_argument("go search: value " + std::to_string(value) + " is outside [-1, 1]");
  }
  Node& node = nodes_[leaf.node];
  if (!node.in_flight) throw std::logic_error("go search: expanding a leaf that is not in flight");
  const int num_actions = leaf.board.num_actions();
  double sum = 0;
  int legal = 0;
  for (int a = 0; a < num_actions; ++a) {
    if (!std::isfinite(policy[a]) || policy[a] < 0) {
      throw std::invalid_argument("go search: policy[" + std::to_string(a) + "] = " + std::to_string(policy[a]) +
                                  " is not a probability");
    }
    if (leaf.legal[a]) {
      sum += policy[a];
      ++legal;
    }
  }
  const int first = static_cast<int>(edges_.size());
  for (int a = 0; a < num_actions; ++a) {
    if (!leaf.legal[a]) continue;
    Edge edge;
    edge.action = a;
    edge.prior = sum > 0 ? static_cast<float>(policy[a] / sum) : 1.0f / legal;
    edges_.push_back(edge);
  }
  Node& expanded = nodes_[leaf.node];  // edges_ grew; nodes_ did not
  expanded.first_edge = first;
  expanded.num_edges = legal;
  expanded.expanded = true;
  expanded.in_flight = false;
  expanded.evaluation = value;
  for (int e : leaf.path) --edges_[e].in_flight;
  --in_flight_;
  Backup(leaf.path, value);
  ++simulations_;
  if (leaf.node == 0 && !root_noised_) AddNoise(rng);
}

void Search::Backup(const std::vector<int>& path, float value) {
  // `value` is for the side to move at the end of the path; the edge into
  // that position was chosen by the other side.
  float for_chooser = -value;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    edges_[*it].visits += 1;
    edges_[*it].value_sum += for_chooser;
    for_chooser = -for_chooser;
  }
}

void Search::AddNoise(Rng& rng) {
  root_noised_ = true;
  const Node& root = nodes_[0];
  if (!root_noise_ || config_.dirichlet_alpha <= 0 || config_.noise_fraction <= 0 || root.num_edges == 0) return;
  std::vector<double> noise(root.num_edges);
  double total = 0;
  for (double& x : noise) total += (x = Gamma(config_.dirichlet_alpha, rng));
  for (int i = 0; i < root.num_edges; ++i) {
    Edge& edge = edges_[root.first_edge + i];
    const double share = total > 0 ? noise[i] / total : 1.0 / root.num_edges;
    edge.prior = static_cast<float>((1 - config_.noise_fraction) * edge.prior + config_.noise_fraction * share);
  }
}

void Search::VisitDistribution(float* out) const {
  const Node& root = nodes_[0];
  std::fill(out, out + root_board_.num_actions(), 0.0f);
  int total = 0;
  for (int e = root.first_edge; e < root.first_edge + root.num_edges; ++e) total += edges_[e].visits;
  for (int e = root.first_edge; e < root.first_edge + root.num_edges; ++e) {
    out[edges_[e].action] = total > 0 ? static_cast<float>(edges_[e].visits) / total : 0.0f;
  }
}

int Search::Visits(int action) const {
  const Node& root = nodes_[0];
  for (int e = root.first_edge; e < root.first_edge + root.num_edges; ++e) {
    if (edges_[e].action == action) return edges_[e].visits;
  }
  return 0;
}

float Search::Prior(int action) const {
  const Node& root = nodes_[0];
  for (int e = root.first_edge; e < root.first_edge + root.num_edges; ++e) {
    if (edges_[e].action == action) return edges_[e].prior;
  }
  return 0.0f;
}

int Search::ChooseMove(float temperature, Rng& rng) const {
  const Node& root = nodes_[0];
  if (!root.expanded || root.num_edges == 0) throw std::logic_error("go search: no move searched yet");
  if (temperature <= 0) {
    int best = root.first_edge;
    for (int e = root.first_edge; e < root.first_edge + root.num_edges; ++e) {
      const Edge& edge = edges_[e];
      const Edge& top = edges_[best];
      if (edge.visits > top.visits || (edge.visits == top.visits && edge.prior > top.prior)) best = e;
    }
    return edges_[best].action;
  }
  std::vector<double> weights(root.num_edges);
  double total = 0;
  for (int i = 0; i < root.num_edges; ++i) {
    total += (weights[i] = std::pow(static_cast<double>(edges_[root.first_edge + i].visits), 1.0 / temperature));
  }
  if (total <= 0) return ChooseMove(0.0f, rng);
  double pick = rng.Uniform() * total;
  for (int i = 0; i < root.num_edges; ++i) {
    pick -= weights[i];
    if (pick < 0) return edges_[root.first_edge + i].action;
  }
  return edges_[root.first_edge + root.num_edges - 1].action;
}

float Search::RootValue() const {
  const Node& root = nodes_[0];
  int visits = 0;
  float sum = 0;
  for (int e = root.first_edge; e < root.first_edge + root.num_edges; ++e) {
    visits += edges_[e].visits;
    sum += edges_[e].value_sum;
  }
  return visits > 0 ? sum / visits : root.evaluation;
}

int Search::CopySubtree(int node, std::vector<Node>& nodes, std::vector<Edge>& edges) const {
  const int copy = static_cast<int>(nodes.size());
  nodes.push_back(nodes_[node]);
  const Node& from = nodes_[node];
  if (!from.expanded) return copy;
  const int first = static_cast<int>(edges.size());
  for (int e = from.first_edge; e < from.first_edge + from.num_edges; ++e) edges.push_back(edges_[e]);
  nodes[copy].first_edge = first;
  for (int i = 0; i < from.num_edges; ++i) {
    const int child = edges_[from.first_edge + i].child;
    if (child >= 0) {
      const int child_copy = CopySubtree(child, nodes, edges);
      edges[first + i].child = child_copy;
    }
  }
  return copy;
}

void Search::Advance(int action, Rng& rng) {
  if (in_flight_ > 0) throw std::logic_error("go search: Advance with leaves in flight");
  int child = -1;
  const Node& root = nodes_[0];
  for (int e = root.first_edge; e < root.first_edge + root.num_edges; ++e) {
    if (edges_[e].action == action) child = edges_[e].child;
  }
  Board next = root_board_;
  next.Play(action);
  if (child < 0) {
    Reset(next);
    return;
  }
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  nodes.reserve(nodes_.size());
  edges.reserve(edges_.size());
  CopySubtree(child, nodes, edges);
  nodes_.swap(nodes);
  edges_.swap(edges);
  root_board_ = next;
  simulations_ = 0;
  root_noised_ = false;
  if (nodes_[0].expanded) AddNoise(rng);
}

}  // namespace elf::go
