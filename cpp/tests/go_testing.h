// Go test helpers shared by test_go*.cc: boards set up from diagrams.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "games/go/board.h"

namespace elf::go::testing {

// Sets up a diagram (rows top to bottom; X black, O white, . empty) by
// playing its stones, retrying any stone that is not yet legal. The game
// ends `moves_left` moves after the set-up.
inline Board FromDiagram(const std::vector<std::string>& rows, elf::go::Color to_move = elf::go::kBlack,
                         int moves_left = 1000) {
  int stones = 0;
  for (const std::string& row : rows) {
    for (char c : row) stones += c != '.';
  }
  Board board(static_cast<int>(rows.size()), stones + moves_left);
  std::vector<std::pair<int, elf::go::Color>> pending;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t c = 0; c < rows[r].size(); ++c) {
      const int action = static_cast<int>(r * rows.size() + c);
      if (rows[r][c] == 'X') pending.push_back({action, elf::go::kBlack});
      if (rows[r][c] == 'O') pending.push_back({action, elf::go::kWhite});
    }
  }
  while (!pending.empty()) {
    std::vector<std::pair<int, elf::go::Color>> later;
    for (const auto& [action, color] : pending) {
      board.set_to_move(color);
      if (board.IsLegal(action)) {
        CHECK_EQ(board.Play(action), 0);
      } else {
        later.push_back({action, color});
      }
    }
    REQUIRE(later.size() < pending.size());
    pending = later;
  }
  board.set_to_move(to_move);
  return board;
}

}  // namespace elf::go::testing
