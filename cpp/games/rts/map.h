// MiniRTS map: a square tile grid with impassable rock and resource mines,
// generated point-symmetric (player 1's view is player 0's rotated by 180
// degrees), and a small cache of BFS distance fields for pathfinding.
// All storage is sized once per map size; nothing allocates per tick.
#pragma once

#include <cstdint>
#include <vector>

#include "elf/rng.h"

namespace elf::minirts {

enum Terrain : uint8_t { kGround = 0, kRock = 1, kMine = 2 };

inline constexpr int kMinMapSize = 10;
inline constexpr int kMaxMapSize = 64;

class Map {
 public:
  explicit Map(int size);

  // A new random layout: rocks (mirrored), two mines per side near each base
  // and two in the middle. Every mine and both bases stay reachable.
  void Generate(Rng& rng);

  int size() const { return size_; }
  int Index(int x, int y) const { return y * size_ + x; }
  bool Inside(int x, int y) const { return x >= 0 && y >= 0 && x < size_ && y < size_; }
  uint8_t terrain(int x, int y) const { return terrain_[Index(x, y)]; }
  bool Passable(int x, int y) const { return Inside(x, y) && terrain_[Index(x, y)] == kGround; }
  int resources(int x, int y) const { return amount_[Index(x, y)]; }
  // Takes up to `want` resources from the mine at (x, y); returns what it got.
  int Take(int x, int y, int want);

  // Base tile of a player: (2, 2) and its mirror.
  int BaseX(int player) const { return player == 0 ? 2 : size_ - 3; }
  int BaseY(int player) const { return player == 0 ? 2 : size_ - 3; }
  int Mirror(int c) const { return size_ - 1 - c; }

  struct Tile {
    int16_t x, y;
  };
  const std::vector<Tile>& mines() const { return mines_; }

 private:
  void PlaceMine(int x, int y);
  bool Connected() const;

  int size_;
  std::vector<uint8_t> terrain_;
  std::vector<int16_t> amount_;
  std::vector<Tile> mines_;
  mutable std::vector<int16_t> queue_;
  mutable std::vector<uint8_t> mark_;
};

// Distance fields on the terrain (8-connected, units ignored): the number of
// steps from each tile to a target tile, kFar where unreachable. The target
// itself may be impassable (a mine, a building). Holds a few fields and
// recomputes the least recently used one on a miss.
class PathCache {
 public:
  static constexpr uint16_t kFar = 0xFFFF;
  static constexpr int kSlots = 8;

  explicit PathCache(int size);
  void Clear();  // after the terrain changed
  const uint16_t* FieldTo(const Map& map, int x, int y);

 private:
  int size_;
  int target_[kSlots];
  uint32_t used_[kSlots];
  uint32_t clock_ = 0;
  std::vector<uint16_t> fields_;  // kSlots * size * size
  std::vector<int16_t> queue_;
};

}  // namespace elf::minirts
