// The options every Go game reads (board size, komi, length limit, the
// starting position), read once through the SpecBuilder; the starting moves
// are checked there, so a bad one is rejected when the context is made.
#pragma once

#include <stdexcept>
#include <string>

#include "elf/spec.h"
#include "games/go/board.h"

namespace elf::go {

inline constexpr const char* kFeaturesMeaning =
    "planes 0-7: the side to move's stones now and 1..7 moves ago; 8-15: the opponent's; 16: ones if black "
    "is to move";

// The member initialisers are the options' defaults (DefineBoardOptions reads them).
struct BoardOptions {
  int size = 9;
  float komi = kDefaultKomi;
  int max_moves = 0;
  std::string moves;
  std::string to_move;
};

inline Board NewBoard(const BoardOptions& options) {
  Board board(options.size, options.max_moves);
  board.PlayMoves(options.moves);
  if (options.to_move == "b" || options.to_move == "B") board.set_to_move(kBlack);
  if (options.to_move == "w" || options.to_move == "W") board.set_to_move(kWhite);
  return board;
}

inline BoardOptions DefineBoardOptions(SpecBuilder& spec) {
  BoardOptions options;
  options.size = spec.Option("board_size", options.size, "board size: 9, 13 or 19");
  if (options.size != 9 && options.size != 13 && options.size != 19) {
    throw std::invalid_argument("option 'board_size' must be 9, 13 or 19, got " + std::to_string(options.size));
  }
  options.komi = spec.Option("komi", options.komi, "points added to white's area");
  options.max_moves =
      spec.Option("max_moves", options.max_moves, "moves after which the game ends and is scored (0: 2 * size^2)");
  options.moves = spec.Option("moves", options.moves, "moves played before the game starts, e.g. 'B D4, W pass'");
  options.to_move =
      spec.Option("to_move", options.to_move, "who moves first after `moves`: b, w, or empty (alternate)");
  if (!options.to_move.empty() && options.to_move != "b" && options.to_move != "B" && options.to_move != "w" &&
      options.to_move != "W") {
    throw std::invalid_argument("option 'to_move' must be b or w, got '" + options.to_move + "'");
  }
  NewBoard(options);  // throws on a malformed or illegal starting move
  return options;
}

}  // namespace elf::go
