// The rules of Go on a 9x9, 13x13 or 19x19 board: captures, suicide illegal,
// positional superko (a move may not recreate any earlier whole-board
// position, whoever is to move), passing, the game ends after two passes in a
// row or after `max_moves` moves, Tromp-Taylor area scoring with komi.
//
// Groups are tracked incrementally: each stone belongs to a circular list of
// its group's stones, and the group (at its head stone) keeps its size, its
// pseudo-liberties (the number of (stone, empty neighbour) pairs, which is
// zero exactly when the group has no liberty) and the XOR of its stones'
// Zobrist keys, so the hash of the position after a move, captures included,
// is known before the move is played. Positions seen so far are kept as
// hashes (a 4096-bit filter in front of a list), and the last 8 positions as
// stone snapshots for the network's features.
//
// Actions are 0..N*N-1 for the point at row * N + column (row 0 is the top,
// the GTP row N) and N*N for a pass. A Board is a plain value: copy it to
// explore; not thread-safe.
#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

namespace elf::go {

enum Color : uint8_t { kEmpty = 0, kBlack = 1, kWhite = 2, kBorder = 3 };
inline Color Opponent(Color color) { return static_cast<Color>(3 - color); }

inline constexpr int kMaxSize = 19;
inline constexpr int kHistory = 8;        // positions in the features
inline constexpr int kLibertyPlanes = 3;   // stones whose group has 1, 2, 3 or more liberties
// own x8, opponent x8, black to move, own by liberties x3, opponent's x3
inline constexpr int kFeaturePlanes = 2 * kHistory + 1 + 2 * kLibertyPlanes;
// The komi of every Go game and search that is given none (the option
// `komi`, read by Python's tools through game_options): area scoring's usual
// komi, and a half point so that no game is drawn.
inline constexpr float kDefaultKomi = 7.5f;

class Board {
 public:
  // size 9, 13 or 19 (any size in [2, 19] works); max_moves <= 0: 2 * size^2.
  explicit Board(int size = 9, int max_moves = 0);

  int size() const { return size_; }
  int num_actions() const { return size_ * size_ + 1; }
  int pass() const { return size_ * size_; }
  Color to_move() const { return to_move_; }
  void set_to_move(Color color) { to_move_ = color; }
  int moves_played() const { return moves_played_; }
  int max_moves() const { return max_moves_; }
  int consecutive_passes() const { return consecutive_passes_; }
  int last_move() const { return last_move_; }  // -1 before the first move
  uint64_t hash() const { return hash_; }       // of the stones only
  int captures(Color color) const { return captures_[color]; }  // stones `color` has captured
  // The game is over: two passes in a row, or max_moves moves played.
  bool Over() const { return consecutive_passes_ >= 2 || moves_played_ >= max_moves_; }

  Color At(int row, int column) const { return color_[Point(row, column)]; }
  Color AtAction(int action) const { return color_[PointOf(action)]; }
  bool IsLegal(int action) const;
  // out[action] = 1 if legal (N*N + 1 entries; the pass is always legal).
  void LegalMask(uint8_t* out) const;
  // Whether the stone `action` would fill one of the mover's own single-point
  // eyes (an empty point whose neighbours are all the mover's stones or the edge).
  bool FillsOwnEye(int action) const;
  // Whether the mover has a legal stone besides filling its own single-point eyes.
  bool HasMoveBesidesEyes() const;
  // Plays `action` for the side to move; throws std::invalid_argument naming
  // the move and the reason if it is illegal. Returns the stones captured.
  int Play(int action);
  // Tromp-Taylor: black's area (stones + empty regions reaching only black)
  // minus white's, minus komi.
  float Score(float komi) const;
  // Liberties of the group with a stone at `action` (0 for an empty point).
  int Liberties(int action) const;
  // [kFeaturePlanes, N, N]: planes 0-7 the side to move's stones now, one move
  // ago, ... seven moves ago; planes 8-15 the opponent's; plane 16 all ones
  // if black is to move; planes 17-19 the side to move's stones whose group
  // has 1, 2, 3 or more liberties, 20-22 the opponent's. Positions before the
  // first move are empty. (The liberty planes spare a small network from
  // learning to count: ataris and captures are what it must see first.)
  void Features(uint8_t* planes) const;
  // Uniformly random legal move that does not fill one of the mover's own
  // single-point eyes; the pass when there is none. `random(n)` is in [0, n).
  template <typename Random>
  int RandomMove(Random&& random) const;

  // GTP-style vertex of an action ("D4", "pass"), and back (-1 if malformed).
  std::string ActionName(int action) const;
  int ParseAction(const std::string& vertex) const;
  std::string ToString() const;  // rows top to bottom, X black, O white, . empty
  // Plays "B D4, W pass, ..." (colour and vertex pairs, separated by spaces
  // or commas; the colour may be omitted for alternate play) from this
  // position; throws std::invalid_argument naming a malformed or illegal move.
  void PlayMoves(const std::string& moves);

 private:
  static constexpr int kMaxPoints = (kMaxSize + 2) * (kMaxSize + 2);
  static constexpr int kFilterBits = 4096;

  int Point(int row, int column) const { return (row + 1) * stride_ + column + 1; }
  int PointOf(int action) const { return Point(action / size_, action % size_); }
  int Neighbor(int point, int direction) const {
    return point + (direction == 0 ? -stride_ : direction == 1 ? 1 : direction == 2 ? stride_ : -1);
  }
  // Why a stone at `point` for the side to move is illegal, or nullptr. Sets
  // the position's hash after the move.
  const char* Illegal(int point, uint64_t* next_hash) const;
  bool Seen(uint64_t hash) const;
  void Remember(uint64_t hash);
  void Place(int point, Color color);
  int RemoveGroup(int head);
  void Merge(int head, int other);
  void PushSnapshot();
  // Liberties of the group at `head`; marks each one counted with `head` in `counted_by`.
  int CountLiberties(int head, std::array<int16_t, kMaxPoints>& counted_by) const;

  int size_;
  int stride_;
  int max_moves_;
  Color to_move_ = kBlack;
  int moves_played_ = 0;
  int consecutive_passes_ = 0;
  int last_move_ = -1;
  uint64_t hash_ = 0;
  std::array<int, 3> captures_{};
  std::array<Color, kMaxPoints> color_{};
  std::array<int16_t, kMaxPoints> next_{};   // next stone of the group (circular)
  std::array<int16_t, kMaxPoints> head_{};   // the group's head stone
  std::array<int16_t, kMaxPoints> libs_{};   // at a head: pseudo-liberties
  std::array<int16_t, kMaxPoints> stones_{}; // at a head: stones in the group
  std::array<uint64_t, kMaxPoints> group_hash_{};  // at a head: XOR of its stones' keys
  std::bitset<kFilterBits> seen_filter_;
  std::vector<uint64_t> seen_;  // every position of the game, the empty board first
  // Stones of the last kHistory positions, row-major, newest at snapshot_head_.
  std::array<std::array<uint8_t, kMaxSize * kMaxSize>, kHistory> snapshots_{};
  int snapshot_head_ = 0;
};

template <typename Random>
int Board::RandomMove(Random&& random) const {
  std::array<int16_t, kMaxSize * kMaxSize> candidates;
  int count = 0;
  for (int action = 0; action < size_ * size_; ++action) {
    if (color_[PointOf(action)] == kEmpty) candidates[count++] = static_cast<int16_t>(action);
  }
  while (count > 0) {
    const int pick = static_cast<int>(random(count));
    const int action = candidates[pick];
    candidates[pick] = candidates[--count];
    if (!FillsOwnEye(action) && IsLegal(action)) return action;
  }
  return pass();
}

}  // namespace elf::go
