// Tree search (games/go/mcts.h) and the "go_mcts" self-play game: visit
// counts on a position with one winning move (exact end-of-game values and a
// fixed evaluator), leaves in flight, tree reuse, root noise, bad
// evaluations, whole self-play games through the engine, a search ended early
// by move_now, and a failure while searches wait for their evaluations.
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "driver.h"
#include "elf/context.h"
#include "games/go/mcts.h"
#include "go_testing.h"

using elf::go::Board;
using elf::go::Leaf;
using elf::go::Search;
using elf::go::SearchConfig;
using elf::go::testing::FromDiagram;

namespace {

// Black to move; white's three stones have one liberty, F4. Capturing wins
// (black's area becomes the whole board: 81 - 7.5); any other move loses
// (black 8 stones, white 3, the rest touches both: 8 - 3 - 7.5).
Board CaptureToWin(int moves_left) {
  return FromDiagram({
                         ".........",
                         ".........",
                         ".........",
                         "...XXX...",
                         "..XOOOX..",
                         "...XX....",
                         ".........",
                         ".........",
                         ".........",
                     },
                     elf::go::kBlack, moves_left);
}

// A fixed evaluator: uniform priors, value tanh(score / 10) for the side to move.
float ScoreValue(const Board& board) {
  const float value = std::tanh(board.Score(7.5f) / 10.0f);
  return board.to_move() == elf::go::kBlack ? value : -value;
}

void RunSimulations(Search& search, int simulations, int leaves_per_round, elf::Rng& rng) {
  const std::vector<float> uniform(82, 1.0f);
  while (search.simulations() < simulations) {
    std::vector<Leaf> leaves;
    search.Select(leaves_per_round, &leaves);
    for (const Leaf& leaf : leaves) search.Expand(leaf, uniform.data(), ScoreValue(leaf.board), rng);
  }
}

int TotalRootVisits(const Search& search) {
  int total = 0;
  for (int a = 0; a < 82; ++a) total += search.Visits(a);
  return total;
}

}  // namespace

TEST(search_finds_the_only_winning_move_when_every_reply_ends_the_game) {
  const Board board = CaptureToWin(1);
  const int win = board.ParseAction("F4");
  Search search(SearchConfig{});
  search.Reset(board);
  elf::Rng rng(1);
  RunSimulations(search, 200, 1, rng);
  // Every child is a finished game: +1 for F4, -1 for the 75 other moves
  // (74 points and the pass). Each loss is tried once (its prior is
  // uniform); then the winner's Q = 1 beats every loser's -1 + U.
  CHECK_EQ(search.ChooseMove(0.0f, rng), win);
  CHECK(search.Visits(win) > 100);
  int losers_visited = 0;
  for (int a = 0; a < 82; ++a) losers_visited += a != win && search.Visits(a) > 0;
  CHECK(losers_visited < 76);
  CHECK(search.RootValue() > 0.0f);
}

TEST(search_with_a_fixed_evaluator_puts_most_visits_on_the_capture) {
  const Board board = CaptureToWin(1000);
  const int win = board.ParseAction("F4");
  Search search(SearchConfig{});
  search.Reset(board);
  elf::Rng rng(2);
  RunSimulations(search, 400, 8, rng);
  // After F4 white's value is -tanh(7.35) ~ -1, so black's Q there is ~ +1;
  // after any other move about tanh(-0.25 .. -0.45) for black.
  const int visits = search.Visits(win);
  CHECK(visits > TotalRootVisits(search) / 2);
  CHECK_EQ(search.ChooseMove(0.0f, rng), win);
  float distribution[82];
  search.VisitDistribution(distribution);
  float sum = 0;
  for (float p : distribution) sum += p;
  CHECK(std::fabs(sum - 1.0f) < 1e-5f);
  CHECK_EQ(distribution[win], static_cast<float>(visits) / TotalRootVisits(search));
}

TEST(pass_only_when_done_searches_the_pass_once_only_own_eyes_are_left) {
  // Black to move with open points: no pass edge, so the pass gets no visits.
  SearchConfig config;
  config.pass_only_when_done = true;
  Search open(config);
  open.Reset(CaptureToWin(1000));
  elf::Rng rng(3);
  RunSimulations(open, 200, 8, rng);
  CHECK_EQ(open.Visits(81), 0);
  CHECK_EQ(open.Prior(81), 0.0f);
  // Black's only empty points are its own single-point eyes (A9, C9) or
  // illegal: the pass is its one move, and the search plays it.
  const Board settled = FromDiagram({
                                        ".X.XO.O.O",
                                        "XXXXOOOOO",
                                        "OOOOOOOOO",
                                        "OOOOOOOOO",
                                        "OOOOOOOOO",
                                        "OOOOOOOOO",
                                        "OOOOOOOOO",
                                        "OOOOOOOOO",
                                        "OOOOOOOOO",
                                    },
                                    elf::go::kBlack, 1000);
  CHECK(!settled.HasMoveBesidesEyes());
  CHECK(settled.FillsOwnEye(settled.ParseAction("A9")));
  Search done(config);
  done.Reset(settled);
  RunSimulations(done, 50, 8, rng);
  CHECK(done.Prior(81) > 0.0f);
  CHECK(done.Visits(81) > 0);
  // The same open position without the option searches the pass like any move.
  Search free(SearchConfig{});
  free.Reset(CaptureToWin(1000));
  RunSimulations(free, 200, 8, rng);
  CHECK(free.Prior(81) > 0.0f);
}

TEST(leaves_in_flight_are_distinct_positions_and_a_collision_stops_selection) {
  Search search(SearchConfig{});
  search.Reset(Board(9));
  std::vector<Leaf> leaves;
  CHECK_EQ(search.Select(8, &leaves), 1);  // the root; the second descent meets it in flight
  CHECK_EQ(search.in_flight(), 1);
  elf::Rng rng(3);
  const std::vector<float> uniform(82, 1.0f);
  search.Expand(leaves[0], uniform.data(), 0.0f, rng);
  leaves.clear();
  CHECK_EQ(search.Select(8, &leaves), 8);
  std::set<int> nodes, moves;
  for (const Leaf& leaf : leaves) {
    nodes.insert(leaf.node);
    moves.insert(leaf.board.last_move());
  }
  CHECK_EQ(nodes.size(), std::size_t{8});
  CHECK_EQ(moves.size(), std::size_t{8});
  CHECK_EQ(search.in_flight(), 8);
  CHECK_THROWS(search.Advance(0, rng), std::logic_error, "in flight");
  for (const Leaf& leaf : leaves) search.Expand(leaf, uniform.data(), 0.0f, rng);
  CHECK_EQ(search.simulations(), 9);
  CHECK_EQ(TotalRootVisits(search), 8);
}

TEST(advance_keeps_the_subtree_of_the_move_played) {
  const Board board = CaptureToWin(1000);
  Search search(SearchConfig{});
  search.Reset(board);
  elf::Rng rng(4);
  RunSimulations(search, 300, 4, rng);
  const int move = search.ChooseMove(0.0f, rng);
  const int kept = search.Visits(move);
  search.Advance(move, rng);
  CHECK_EQ(search.root_board().last_move(), move);
  CHECK_EQ(search.simulations(), 0);
  // The child's own evaluation was one of its visits; the rest went below it.
  CHECK_EQ(TotalRootVisits(search), kept - 1);
  CHECK(search.root_expanded());
  // A move never searched starts a fresh tree.
  const int fresh = search.root_board().ParseAction("A1");
  search.Advance(fresh, rng);
  CHECK(!search.root_expanded());
  CHECK_EQ(search.num_nodes(), 1);
}

TEST(root_noise_mixes_dirichlet_samples_into_the_priors) {
  SearchConfig config;
  config.dirichlet_alpha = 0.03f;
  config.noise_fraction = 0.25f;
  Search search(config);
  search.Reset(Board(9));
  std::vector<Leaf> leaves;
  search.Select(1, &leaves);
  elf::Rng rng(5);
  const std::vector<float> uniform(82, 1.0f);
  search.Expand(leaves[0], uniform.data(), 0.0f, rng);
  float sum = 0, largest = 0;
  for (int a = 0; a < 82; ++a) {
    sum += search.Prior(a);
    largest = std::max(largest, search.Prior(a));
    CHECK(search.Prior(a) >= 0.75f / 82 - 1e-6f);  // (1 - 0.25) * uniform at least
  }
  CHECK(std::fabs(sum - 1.0f) < 1e-4f);
  CHECK(largest > 0.05f);  // alpha 0.03 puts most of the noise on a few moves
  Search plain(SearchConfig{});
  plain.Reset(Board(9));
  leaves.clear();
  plain.Select(1, &leaves);
  plain.Expand(leaves[0], uniform.data(), 0.0f, rng);
  CHECK_EQ(plain.Prior(0), 1.0f / 82);
  Search quiet(config);  // noise configured, but off for this search (a fast one)
  quiet.set_root_noise(false);
  quiet.Reset(Board(9));
  leaves.clear();
  quiet.Select(1, &leaves);
  quiet.Expand(leaves[0], uniform.data(), 0.0f, rng);
  CHECK_EQ(quiet.Prior(0), 1.0f / 82);
}

TEST(expand_rejects_evaluations_that_are_not_probabilities_or_values) {
  Search search(SearchConfig{});
  search.Reset(Board(9));
  std::vector<Leaf> leaves;
  search.Select(1, &leaves);
  elf::Rng rng(6);
  std::vector<float> policy(82, 1.0f);
  CHECK_THROWS(search.Expand(leaves[0], policy.data(), 1.5f, rng), std::invalid_argument, "outside [-1, 1]");
  CHECK_THROWS(search.Expand(leaves[0], policy.data(), NAN, rng), std::invalid_argument, "outside [-1, 1]");
  policy[3] = -0.5f;
  CHECK_THROWS(search.Expand(leaves[0], policy.data(), 0.0f, rng), std::invalid_argument, "policy[3]");
}

TEST(self_play_games_send_leaves_and_report_each_move_once) {
  const int num_games = 3, leaves = 4, max_moves = 12;
  elf::Options options({{"playouts", "16"},
                        {"leaves", std::to_string(leaves)},
                        {"max_moves", std::to_string(max_moves)},
                        {"resign_threshold", "-1"}});
  elf::Context ctx("go_mcts", num_games, 2, 0, true, options);
  CHECK_EQ(ctx.num_seats(), leaves);
  ctx.AddTag(elf::testing::MakeTag("eval", 6, {"s", "legal", "move", "visits", "player", "r", "terminal"},
                                   {"policy", "value"}));
  ctx.Start();
  std::map<int, int> records, games_over;
  std::map<int, float> last_player;
  while (true) {
    bool all_done = true;
    for (int g = 0; g < num_games; ++g) all_done = all_done && games_over[g] >= 2;
    if (all_done) break;
    const elf::BatchRef ref = elf::testing::NextBatch(ctx);
    const int32_t* games = elf::testing::GameIds(ctx, ref);
    const int32_t* seats = elf::testing::Seats(ctx, ref);
    const int64_t* move = elf::testing::Input<int64_t>(ctx, ref, "move");
    const float* visits = elf::testing::Input<float>(ctx, ref, "visits");
    const float* player = elf::testing::Input<float>(ctx, ref, "player");
    const bool* terminal = elf::testing::Input<bool>(ctx, ref, "terminal");
    const float* reward = elf::testing::Input<float>(ctx, ref, "r");
    const uint8_t* legal = elf::testing::Input<uint8_t>(ctx, ref, "legal");
    float* policy = elf::testing::Reply<float>(ctx, ref, "policy");
    float* value = elf::testing::Reply<float>(ctx, ref, "value");
    for (int i = 0; i < ref.size; ++i) {
      const int g = games[i];
      CHECK_EQ(legal[i * 82 + 81], 1);
      if (seats[i] != 0) {
        CHECK_EQ(move[i], -1);
      } else if (move[i] >= 0) {
        ++records[g];
        float sum = 0;
        for (int a = 0; a < 82; ++a) sum += visits[i * 82 + a];
        CHECK(std::fabs(sum - 1.0f) < 1e-5f);
        CHECK(visits[i * 82 + move[i]] > 0.0f);
        if (last_player.count(g)) CHECK_EQ(player[i], -last_player[g]);
        last_player[g] = player[i];
      }
      if (seats[i] == 0 && terminal[i]) {
        // A game of max_moves moves (or fewer: two passes) has ended.
        if (games_over[g] > 0) CHECK(records[g] <= max_moves && records[g] >= 2);
        CHECK(reward[i] == 1.0f || reward[i] == -1.0f || reward[i] == 0.0f);
        ++games_over[g];
        records[g] = 0;
        last_player.erase(g);
      }
      for (int a = 0; a < 82; ++a) policy[i * 82 + a] = 1.0f / 82;
      value[i] = 0.0f;
    }
    ctx.SubmitReplies(ref);
  }
  ctx.Stop();
}

TEST(fast_searches_report_their_moves_with_no_visits_at_the_fraction_asked) {
  elf::Options options({{"playouts", "16"}, {"fast_playouts", "4"}, {"full_search_fraction", "0.25"},
                        {"leaves", "2"}, {"max_moves", "40"}, {"resign_threshold", "-1"}});
  elf::Context ctx("go_mcts", 4, 2, 0, true, options);
  ctx.AddTag(elf::testing::MakeTag("eval", 4, {"move", "visits"}, {"policy", "value"}));
  ctx.Start();
  int full = 0, fast = 0;
  while (full + fast < 400) {
    const elf::BatchRef ref = elf::testing::NextBatch(ctx);
    const int64_t* move = elf::testing::Input<int64_t>(ctx, ref, "move");
    const float* visits = elf::testing::Input<float>(ctx, ref, "visits");
    float* policy = elf::testing::Reply<float>(ctx, ref, "policy");
    float* value = elf::testing::Reply<float>(ctx, ref, "value");
    for (int i = 0; i < ref.size; ++i) {
      if (move[i] >= 0) {
        float sum = 0;
        for (int a = 0; a < 82; ++a) sum += visits[i * 82 + a];
        CHECK(sum == 0.0f || std::fabs(sum - 1.0f) < 1e-5f);
        ++(sum == 0.0f ? fast : full);
      }
      for (int a = 0; a < 82; ++a) policy[i * 82 + a] = 1.0f / 82;
      value[i] = 0.0f;
    }
    ctx.SubmitReplies(ref);
  }
  ctx.Stop();
  // 400 moves at 1/4: 100 full searches expected, sd 8.7.
  CHECK(full >= 70 && full <= 130);
  CHECK_THROWS(elf::Context("go_mcts", 1, 1, 0, true, elf::Options({{"playouts", "4"}, {"fast_playouts", "8"}})),
               std::invalid_argument, "fast_playouts");
}

TEST(move_now_ends_the_search_of_the_move_under_way_and_only_that_one) {
  // With external_moves, the reply move_now = 1 plays the move from what the search has (here: the root's
  // priors, after the step that expanded it); the next move's search still runs to `playouts`.
  elf::Options options({{"playouts", "40"}, {"leaves", "2"}, {"external_moves", "true"}, {"resign_threshold", "-1"}});
  elf::Context ctx("go_mcts", 1, 1, 0, true, options);
  ctx.AddTag(elf::testing::MakeTag("eval", 2, {"move"}, {"policy", "value", "play", "move_now"}));
  ctx.Start();
  std::vector<int> steps_per_move;
  int steps = 0;
  while (steps_per_move.size() < 2) {
    const elf::BatchRef ref = elf::testing::NextBatch(ctx);
    const int32_t* seats = elf::testing::Seats(ctx, ref);
    const int64_t* move = elf::testing::Input<int64_t>(ctx, ref, "move");
    float* policy = elf::testing::Reply<float>(ctx, ref, "policy");
    float* value = elf::testing::Reply<float>(ctx, ref, "value");
    int64_t* play = elf::testing::Reply<int64_t>(ctx, ref, "play");
    int64_t* move_now = elf::testing::Reply<int64_t>(ctx, ref, "move_now");
    for (int i = 0; i < ref.size; ++i) {
      if (seats[i] == 0 && move[i] >= 0) {
        steps_per_move.push_back(steps);
        steps = 0;
      }
    }
    ++steps;
    for (int i = 0; i < ref.size; ++i) {
      for (int a = 0; a < 82; ++a) policy[i * 82 + a] = 1.0f / 82;
      value[i] = 0.0f;
      play[i] = 0;
      move_now[i] = steps_per_move.empty() ? 1 : 0;  // during the first move only
    }
    ctx.SubmitReplies(ref);
  }
  ctx.Stop();
  CHECK_EQ(steps_per_move[0], 1);
  CHECK(steps_per_move[1] >= 40 / 2);  // 40 simulations, at most 2 a step
}

TEST(a_bad_evaluation_or_a_failed_evaluator_stops_every_search) {
  elf::Options options({{"playouts", "8"}, {"leaves", "2"}});
  {
    elf::Context ctx("go_mcts", 4, 2, 0, false, options);
    ctx.AddTag(elf::testing::MakeTag("eval", 4, {"s"}, {"policy", "value"}));
    ctx.Start();
    const elf::BatchRef ref = elf::testing::NextBatch(ctx);
    float* value = elf::testing::Reply<float>(ctx, ref, "value");
    float* policy = elf::testing::Reply<float>(ctx, ref, "policy");
    for (int i = 0; i < ref.size * 82; ++i) policy[i] = 0.5f;
    for (int i = 0; i < ref.size; ++i) value[i] = NAN;
    // A NaN never reaches a search: the engine refuses the reply (no game steps).
    CHECK_THROWS(ctx.SubmitReplies(ref), std::invalid_argument, "must be finite");
    for (int i = 0; i < ref.size; ++i) value[i] = 2.0f;  // finite, but no value: the search refuses it
    ctx.SubmitReplies(ref);
    bool raised = false;
    try {
      // Until the error comes, however long a loaded machine takes; if it
      // never comes, this hangs and the watchdog names the test.
      for (;;) {
        if (auto next = ctx.Wait(100)) ctx.SubmitReplies(*next);
      }
    } catch (const elf::GameError& e) {
      raised = std::string(e.what()).find("outside [-1, 1]") != std::string::npos;
    }
    CHECK(raised);
    ctx.Stop();
  }
  {
    // The evaluator fails (Python's callback raised): the context fails,
    // waiting callers wake with the message, and Stop returns.
    elf::Context ctx("go_mcts", 8, 2, 0, false, options);
    ctx.AddTag(elf::testing::MakeTag("eval", 4, {"s"}, {"policy", "value"}));
    ctx.Start();
    elf::testing::NextBatch(ctx);
    ctx.Fail("eval callback raised RuntimeError");
    CHECK_THROWS(ctx.Wait(100), elf::GameError, "eval callback raised");
    ctx.Stop();
  }
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
