// Go rules (games/go/board.h) and the "go" game: hand-worked positions for
// captures, suicide, ko, positional superko and Tromp-Taylor scoring (seki
// and dame), features, and random playouts that keep every group alive.
#include <chrono>
#include <ctime>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "driver.h"
#include "elf/context.h"
#include "elf/rng.h"
#include "games/go/board.h"
#include "go_testing.h"

using elf::go::Board;
using elf::go::testing::FromDiagram;
using elf::go::kBlack;
using elf::go::kEmpty;
using elf::go::kWhite;

namespace {

int Legal(const Board& board) {
  std::vector<uint8_t> mask(board.num_actions());
  board.LegalMask(mask.data());
  int count = 0;
  for (uint8_t m : mask) count += m;
  return count;
}

// Every group on the board has a liberty (checked by flood fill).
bool AllGroupsBreathe(const Board& board) {
  const int n = board.size();
  std::vector<int> seen(n * n, 0);
  for (int start = 0; start < n * n; ++start) {
    if (board.AtAction(start) == kEmpty || seen[start]) continue;
    std::vector<int> stack = {start};
    seen[start] = 1;
    bool liberty = false;
    while (!stack.empty()) {
      const int at = stack.back();
      stack.pop_back();
      const int r = at / n, c = at % n;
      const int neighbors[4][2] = {{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}};
      for (const auto& [nr, nc] : neighbors) {
        if (nr < 0 || nc < 0 || nr >= n || nc >= n) continue;
        const int next = nr * n + nc;
        if (board.AtAction(next) == kEmpty) liberty = true;
        if (board.AtAction(next) == board.AtAction(start) && !seen[next]) {
          seen[next] = 1;
          stack.push_back(next);
        }
      }
    }
    if (!liberty) return false;
  }
  return true;
}

}  // namespace

TEST(vertices_read_and_print_in_gtp_coordinates) {
  Board board(9);
  CHECK_EQ(board.ParseAction("A9"), 0);
  CHECK_EQ(board.ParseAction("j1"), 80);
  CHECK_EQ(board.ParseAction("D4"), 5 * 9 + 3);
  CHECK_EQ(board.ParseAction("pass"), 81);
  CHECK_EQ(board.ParseAction("I5"), -1);
  CHECK_EQ(board.ParseAction("A10"), -1);
  CHECK_EQ(board.ActionName(80), std::string("J1"));
  CHECK_EQ(board.ActionName(81), std::string("pass"));
  CHECK_EQ(Board(19).ActionName(Board(19).ParseAction("T19")), std::string("T19"));
}

TEST(empty_board_allows_every_point_and_the_pass) {
  CHECK_EQ(Legal(Board(9)), 82);
  CHECK_EQ(Legal(Board(13)), 170);
  CHECK_EQ(Legal(Board(19)), 362);
  CHECK_THROWS(Board(20), std::invalid_argument, "board size");
}

TEST(one_move_captures_two_separate_groups) {
  Board board = FromDiagram({
      "XO.OX",
      ".X.X.",
      ".....",
      ".....",
      ".....",
  });
  CHECK_EQ(board.Play(board.ParseAction("C5")), 2);
  CHECK_EQ(board.AtAction(1), kEmpty);
  CHECK_EQ(board.AtAction(3), kEmpty);
  CHECK_EQ(board.captures(kBlack), 2);
  CHECK_EQ(board.ToString(), std::string("X.X.X\n.X.X.\n.....\n.....\n.....\n"));
}

TEST(capturing_a_chain_removes_all_its_stones) {
  Board board = FromDiagram({
      "XOOO.",
      ".XXX.",
      ".....",
      ".....",
      ".....",
  });
  CHECK_EQ(board.Play(board.ParseAction("E5")), 3);
  CHECK_EQ(board.ToString(), std::string("X...X\n.XXX.\n.....\n.....\n.....\n"));
  CHECK(AllGroupsBreathe(board));
}

TEST(a_move_without_liberties_is_legal_only_when_it_captures) {
  // Black C5 has no empty neighbour; it captures B5 and D5, so it is legal.
  Board board = FromDiagram({
      "XO.OX",
      ".XOX.",
      ".....",
      ".....",
      ".....",
  });
  CHECK(board.IsLegal(board.ParseAction("C5")));
  CHECK_EQ(board.Play(board.ParseAction("C5")), 2);
  CHECK_EQ(board.AtAction(7), kWhite);  // C4 keeps its liberties
}

TEST(suicide_of_one_stone_and_of_a_group_is_illegal) {
  Board board = FromDiagram({
      ".O...",
      "O....",
      ".....",
      "XXO..",
      ".XO..",
  });
  CHECK(!board.IsLegal(board.ParseAction("A5")));  // one stone, no liberty, captures nothing
  CHECK_THROWS(board.Play(board.ParseAction("A5")), std::invalid_argument, "illegal move B A5: suicide");
  // Black A1 fills the last liberty of its own group A2-B2-B1.
  Board group = FromDiagram({
      ".....",
      ".....",
      "OOO..",
      "XXO..",
      ".XO..",
  });
  CHECK(!group.IsLegal(group.ParseAction("A1")));
  group.set_to_move(kWhite);
  CHECK(group.IsLegal(group.ParseAction("A1")));  // for white it captures three stones
  CHECK_EQ(group.Play(group.ParseAction("A1")), 3);
  CHECK_EQ(group.captures(kWhite), 3);
}

TEST(ko_recapture_waits_for_a_move_elsewhere) {
  Board board = FromDiagram({
      ".XO..",
      "XO.O.",
      ".XO..",
      ".....",
      ".....",
  });
  const int take = board.ParseAction("C4"), retake = board.ParseAction("B4");
  CHECK_EQ(board.Play(take), 1);
  CHECK(!board.IsLegal(retake));  // would recreate the position before black's capture
  CHECK_THROWS(board.Play(retake), std::invalid_argument, "positional superko");
  board.Play(board.ParseAction("E1"));  // white threatens elsewhere
  board.Play(board.ParseAction("E2"));  // black answers
  CHECK(board.IsLegal(retake));
  CHECK_EQ(board.Play(retake), 1);
}

TEST(positional_superko_forbids_a_position_from_many_moves_ago) {
  // On a 2x2 board: B A2, W B1, B B2, W A1 (captures A2 B2), B A2, W B2
  // (captures A2); black A2 would now capture all three white stones and
  // recreate the position after move one (black A2 alone): illegal, though
  // no simple ko forbids it (the position two moves ago differs).
  Board board(2);
  board.PlayMoves("B A2, W B1, B B2");
  CHECK_EQ(board.Play(board.ParseAction("A1")), 2);
  board.PlayMoves("B A2");
  CHECK_EQ(board.Play(board.ParseAction("B2")), 1);
  CHECK_EQ(board.to_move(), kBlack);
  CHECK(!board.IsLegal(board.ParseAction("A2")));
  CHECK_EQ(Legal(board), 1);  // only the pass
  // Same stones, fresh history: the capture is legal.
  Board fresh = FromDiagram({".O", "OO"});
  CHECK(fresh.IsLegal(fresh.ParseAction("A2")));
  CHECK_EQ(fresh.Play(fresh.ParseAction("A2")), 3);
}

TEST(game_ends_after_two_passes_in_a_row_or_at_the_move_limit) {
  Board board(9);
  board.Play(board.pass());
  board.Play(board.ParseAction("E5"));
  board.Play(board.pass());
  CHECK(!board.Over());
  board.Play(board.pass());
  CHECK(board.Over());
  CHECK_THROWS(board.Play(0), std::invalid_argument, "after the game ended");
  Board short_game(9, 3);
  short_game.PlayMoves("E5 D4 pass");
  CHECK(short_game.Over());
}

TEST(tromp_taylor_counts_stones_and_empty_regions_of_one_colour) {
  const Board walls = FromDiagram({
      ".XO..",
      ".XO..",
      ".XO..",
      ".XO..",
      ".XO..",
  });
  // Black: 5 stones + column A (5); white: 5 stones + columns D, E (10).
  CHECK_EQ(walls.Score(0.5f), 10.0f - 15.0f - 0.5f);
  CHECK_EQ(Board(9).Score(7.5f), -7.5f);  // an empty board reaches no stone: nobody's
}

TEST(dame_between_the_walls_counts_for_nobody) {
  const Board board = FromDiagram({
      ".X.O.",
      ".X.O.",
      ".X.O.",
      ".X.O.",
      ".X.O.",
  });
  // Black 5 + 5, white 5 + 5; column C touches both colours.
  CHECK_EQ(board.Score(0.0f), 0.0f);
  CHECK_EQ(board.Score(7.5f), -7.5f);
}

TEST(seki_stones_count_and_their_shared_liberties_are_dame) {
  // White's inner group (C5 B4 C4 D4) and black's wall share the two
  // liberties B5 and D5; whoever fills one is captured at the other: seki.
  Board board = FromDiagram({
      "X.O.X",
      "XOOOX",
      "XXXXX",
      "OOOOO",
      ".....",
  });
  for (const char* vertex : {"B5", "D5"}) {
    Board black = board;
    black.Play(black.ParseAction(vertex));  // black fills one shared liberty...
    const std::string other = std::string(vertex) == "B5" ? "D5" : "B5";
    CHECK_EQ(black.Play(black.ParseAction(other)), 10);  // ...and white captures the whole wall
  }
  // Black 9 stones; white 9 stones + row 1 (5); B5 and D5 touch both: dame.
  CHECK_EQ(board.Score(0.0f), 9.0f - 14.0f);
  CHECK_EQ(board.Score(0.5f), -5.5f);
}

TEST(features_hold_the_last_eight_positions_from_the_movers_view) {
  Board board(9);
  board.PlayMoves("E5 D4 C3");  // white to move
  std::vector<uint8_t> planes(elf::go::kFeaturePlanes * 81);
  board.Features(planes.data());
  auto at = [&](int plane, const char* vertex) { return planes[plane * 81 + board.ParseAction(vertex)]; };
  CHECK_EQ(at(0, "D4"), 1);   // white's stone now
  CHECK_EQ(at(8, "E5"), 1);   // black's stones now
  CHECK_EQ(at(8, "C3"), 1);
  CHECK_EQ(at(9, "C3"), 0);   // one move ago C3 was empty
  CHECK_EQ(at(9, "E5"), 1);
  CHECK_EQ(at(1, "D4"), 1);
  CHECK_EQ(at(2, "D4"), 0);   // two moves ago
  CHECK_EQ(at(10, "E5"), 1);
  CHECK_EQ(at(11, "E5"), 0);  // three moves ago: the empty board
  CHECK_EQ(at(16, "A1"), 0);  // white to move
  CHECK_EQ(at(19, "D4"), 1);  // white's stone has 4 liberties: 3 or more
  CHECK_EQ(at(22, "E5"), 1);  // so have black's
  CHECK_EQ(at(22, "C3"), 1);
  int ones = 0;
  for (uint8_t v : planes) ones += v;
  CHECK_EQ(ones, 1 + 2 + 1 + 1 + 1 + 3);
}

TEST(liberty_planes_count_each_shared_liberty_once) {
  Board board = FromDiagram({
      "XO...",
      ".XX..",
      "O.X..",
      "X....",
      "O....",
  });  // black to move
  auto libs = [&](const char* vertex) { return board.Liberties(board.ParseAction(vertex)); };
  CHECK_EQ(libs("B4"), 6);  // B3 touches B4 and C3 and counts once: A4 B3 C5 D4 D3 C2
  CHECK_EQ(libs("C3"), 6);
  CHECK_EQ(libs("A5"), 1);  // A4, shared with two other groups
  CHECK_EQ(libs("B5"), 1);  // C5
  CHECK_EQ(libs("A3"), 2);  // A4 B3
  CHECK_EQ(libs("A2"), 1);  // B2
  CHECK_EQ(libs("A1"), 1);  // B1
  CHECK_EQ(libs("E1"), 0);  // empty
  std::vector<uint8_t> planes(elf::go::kFeaturePlanes * 25);
  board.Features(planes.data());
  auto planes_at = [&](const char* vertex) {
    std::string on;
    for (int plane = 17; plane < elf::go::kFeaturePlanes; ++plane) {
      if (planes[plane * 25 + board.ParseAction(vertex)]) on += std::to_string(plane) + " ";
    }
    return on;
  };
  // 17-19: black's (to move) stones in groups of 1, 2, 3+ liberties; 20-22 white's.
  CHECK_EQ(planes_at("A5"), std::string("17 "));
  CHECK_EQ(planes_at("A2"), std::string("17 "));
  CHECK_EQ(planes_at("B4"), std::string("19 "));
  CHECK_EQ(planes_at("C4"), std::string("19 "));
  CHECK_EQ(planes_at("C3"), std::string("19 "));
  CHECK_EQ(planes_at("B5"), std::string("20 "));
  CHECK_EQ(planes_at("A1"), std::string("20 "));
  CHECK_EQ(planes_at("A3"), std::string("21 "));
  CHECK_EQ(planes_at("E1"), std::string(""));
}

TEST(starting_moves_with_colours_and_errors_name_the_move) {
  Board board(9);
  board.PlayMoves("B E5, B D5, W pass");
  CHECK_EQ(board.AtAction(board.ParseAction("D5")), kBlack);
  CHECK_EQ(board.to_move(), kBlack);
  CHECK_THROWS(board.PlayMoves("Z9"), std::invalid_argument, "cannot read move 'Z9'");
  CHECK_THROWS(board.PlayMoves("E5"), std::invalid_argument, "illegal move B E5: occupied");
}

TEST(random_playouts_end_with_every_group_breathing_and_report_their_speed) {
  elf::Rng rng(7);
  auto random = [&](int n) { return rng.Below(n); };
  const int games = elf::testing::Scaled(1000);
  long moves = 0;
  int black_wins = 0;
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();  // the process's CPU time: this thread (the watchdog sleeps)
  for (int game = 0; game < games; ++game) {
    Board board(9);
    while (!board.Over()) {
      board.Play(board.RandomMove(random));
      ++moves;
    }
    black_wins += board.Score(7.5f) > 0;
    if (game % 50 == 0) CHECK(AllGroupsBreathe(board));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  std::fprintf(stderr,
               "9x9 random playouts: %.0f /s per CPU second, %.0f /s wall, one thread (%.1f moves each), "
               "black won %d of %d\n",
               games / cpu_seconds, games / seconds, static_cast<double>(moves) / games, black_wins, games);
  CHECK(black_wins > 0 && black_wins < games);
}

TEST(every_move_of_random_games_keeps_groups_alive_and_the_hash_consistent) {
  elf::Rng rng(11);
  for (int game = 0; game < elf::testing::Scaled(20); ++game) {
    Board board(9);
    std::set<uint64_t> seen = {board.hash()};
    while (!board.Over()) {
      const int before = board.moves_played();
      const int action = static_cast<int>(rng.Below(82));
      if (!board.IsLegal(action)) continue;
      board.Play(action);
      CHECK(AllGroupsBreathe(board));
      // A placed stone never recreates a position: positional superko.
      if (action != board.pass()) CHECK(seen.insert(board.hash()).second);
      // The hash is that of the stones alone: rebuilding them gives it back.
      if (before % 17 == 0) {
        std::vector<std::string> rows(9, std::string(9, '.'));
        for (int i = 0; i < 81; ++i) {
          if (board.AtAction(i) != kEmpty) rows[i / 9][i % 9] = board.AtAction(i) == kBlack ? 'X' : 'O';
        }
        CHECK_EQ(FromDiagram(rows).hash(), board.hash());
      }
    }
  }
}

TEST(go_game_plays_replies_and_rewards_the_winner) {
  elf::Options options({{"board_size", "9"}, {"komi", "7.5"}, {"moves", "B E5, W pass, B D5"}});
  elf::Context ctx("go", 1, 1, 0, true, options);
  ctx.AddTag(elf::testing::MakeTag("actor", 1, {"s", "legal", "stones", "to_move", "score", "r", "terminal"},
                                   {"a"}));
  ctx.Start();
  // White to move; both pass: black wins by 81 - 7.5.
  for (int step = 0; step < 3; ++step) {
    const elf::BatchRef ref = elf::testing::NextBatch(ctx);
    const float score = *elf::testing::Input<float>(ctx, ref, "score");
    if (step == 0) {
      CHECK_EQ(*elf::testing::Input<int32_t>(ctx, ref, "to_move"), 2);
      CHECK_EQ(score, 81.0f - 7.5f);
      CHECK_EQ(elf::testing::Input<uint8_t>(ctx, ref, "stones")[4 * 9 + 4], 1);
      CHECK_EQ(elf::testing::Input<uint8_t>(ctx, ref, "legal")[4 * 9 + 4], 0);
    }
    if (step == 2) {
      CHECK_EQ(*elf::testing::Input<bool>(ctx, ref, "terminal"), 1);
      CHECK_EQ(*elf::testing::Input<float>(ctx, ref, "r"), 1.0f);
      CHECK_EQ(score, 81.0f - 7.5f);  // the new game starts from the same moves
    }
    *elf::testing::Reply<int64_t>(ctx, ref, "a") = 81;
    ctx.SubmitReplies(ref);
  }
  ctx.Stop();
  CHECK_THROWS(elf::Context("go", 1, 1, 0, true, elf::Options(std::map<std::string, std::string>{{"moves", "E5 E5"}})), std::invalid_argument,
               "occupied");
  CHECK_THROWS(elf::Context("go", 1, 1, 0, true, elf::Options(std::map<std::string, std::string>{{"board_size", "11"}})), std::invalid_argument,
               "9, 13 or 19");
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
