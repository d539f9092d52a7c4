#include "games/rts/map.h"

#include <algorithm>
#include <cstdlib>

#include "games/rts/units.h"

namespace elf::minirts {

namespace {
constexpr int kDx[8] = {1, -1, 0, 0, 1, 1, -1, -1};
constexpr int kDy[8] = {0, 0, 1, -1, 1, -1, 1, -1};
}  // namespace

Map::Map(int size)
    : size_(size),
      terrain_(size * size, kGround),
      amount_(size * size, 0),
      queue_(size * size),
      mark_(size * size) {
  mines_.reserve(8);
}

int Map::Take(int x, int y, int want) {
  int16_t& amount = amount_[Index(x, y)];
  const int got = std::min<int>(want, amount);
  amount = static_cast<int16_t>(amount - got);
  return got;
}

void Map::PlaceMine(int x, int y) {
  terrain_[Index(x, y)] = kMine;
  amount_[Index(x, y)] = kMineAmount;
  mines_.push_back({static_cast<int16_t>(x), static_cast<int16_t>(y)});
  terrain_[Index(Mirror(x), Mirror(y))] = kMine;
  amount_[Index(Mirror(x), Mirror(y))] = kMineAmount;
  mines_.push_back({static_cast<int16_t>(Mirror(x)), static_cast<int16_t>(Mirror(y))});
}

void Map::Generate(Rng& rng) {
  const int n = size_;
  for (int attempt = 0;; ++attempt) {
    std::fill(terrain_.begin(), terrain_.end(), kGround);
    std::fill(amount_.begin(), amount_.end(), 0);
    mines_.clear();
    // Mines: two by each base (one along each edge), two in the middle.
    PlaceMine(BaseX(0) + 4, BaseY(0));
    PlaceMine(BaseX(0), BaseY(0) + 4);
    PlaceMine(n / 2 - 1, n / 2);
    if (attempt >= 10) return;  // give up on rocks; the open map is connected
    // Rocks: n*n/25 tiles in the first half of the grid, mirrored, kept
    // clear of the bases' and mines' surroundings.
    const int rocks = n * n / 25;
    for (int i = 0; i < rocks; ++i) {
      const int index = static_cast<int>(rng.Below(n * n / 2));
      const int x = index % n, y = index / n;
      bool clear = true;
      for (int p = 0; p < 2 && clear; ++p) {
        clear = std::max(std::abs(x - BaseX(p)), std::abs(y - BaseY(p))) > 2;
      }
      for (const Tile& mine : mines_) {
        clear = clear && std::max(std::abs(x - mine.x), std::abs(y - mine.y)) > 1;
      }
      if (!clear || terrain_[Index(x, y)] != kGround) continue;
      terrain_[Index(x, y)] = kRock;
      terrain_[Index(Mirror(x), Mirror(y))] = kRock;
    }
    if (Connected()) return;
  }
}

// All ground tiles form one 8-connected region (so every mine, base and
// building site is reachable).
bool Map::Connected() const {
  const int n = size_;
  std::fill(mark_.begin(), mark_.end(), 0);
  int head = 0, tail = 0, ground = 0;
  for (int i = 0; i < n * n; ++i) ground += terrain_[i] == kGround;
  const int start = Index(BaseX(0) + 1, BaseY(0) + 1);
  queue_[tail++] = static_cast<int16_t>(start);
  mark_[start] = 1;
  while (head < tail) {
    const int at = queue_[head++];
    const int x = at % n, y = at / n;
    for (int d = 0; d < 8; ++d) {
      const int nx = x + kDx[d], ny = y + kDy[d];
      if (!Passable(nx, ny) || mark_[Index(nx, ny)]) continue;
      mark_[Index(nx, ny)] = 1;
      queue_[tail++] = static_cast<int16_t>(Index(nx, ny));
    }
  }
  return tail == ground;
}

PathCache::PathCache(int size) : size_(size), fields_(kSlots * size * size), queue_(size * size) { Clear(); }

void PathCache::Clear() {
  for (int i = 0; i < kSlots; ++i) {
    target_[i] = -1;
    used_[i] = 0;
  }
  clock_ = 0;
}

const uint16_t* PathCache::FieldTo(const Map& map, int x, int y) {
  const int n = size_;
  const int target = y * n + x;
  ++clock_;
  int victim = 0;
  for (int i = 0; i < kSlots; ++i) {
    if (target_[i] == target) {
      used_[i] = clock_;
      return &fields_[static_cast<std::size_t>(i) * n * n];
    }
    if (used_[i] < used_[victim]) victim = i;
  }
  uint16_t* field = &fields_[static_cast<std::size_t>(victim) * n * n];
  target_[victim] = target;
  used_[victim] = clock_;
  std::fill(field, field + n * n, kFar);
  int head = 0, tail = 0;
  field[target] = 0;
  queue_[tail++] = static_cast<int16_t>(target);
  while (head < tail) {
    const int at = queue_[head++];
    const int ax = at % n, ay = at / n;
    const uint16_t next = static_cast<uint16_t>(field[at] + 1);
    for (int d = 0; d < 8; ++d) {
      const int nx = ax + kDx[d], ny = ay + kDy[d];
      if (!map.Passable(nx, ny)) continue;
      const int ni = ny * n + nx;
      if (field[ni] != kFar) continue;
      field[ni] = next;
      queue_[tail++] = static_cast<int16_t>(ni);
    }
  }
  return field;
}

}  // namespace elf::minirts
