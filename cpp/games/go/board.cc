// Go rules (see board.h).
#include "games/go/board.h"

#include <stdexcept>

namespace elf::go {
namespace {

// Zobrist keys per (point, color), from a fixed splitmix64 stream so hashes
// are the same in every process.
struct Zobrist {
  std::array<std::array<uint64_t, 3>, (kMaxSize + 2) * (kMaxSize + 2)> keys{};
  Zobrist() {
    uint64_t x = 0x243F6A8885A308D3ULL;
    for (auto& point : keys) {
      for (auto& key : point) {
        uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        key = z ^ (z >> 31);
      }
    }
  }
};

uint64_t Key(int point, Color color) {
  static const Zobrist zobrist;
  return zobrist.keys[point][color];
}

constexpr char kColumns[] = "ABCDEFGHJKLMNOPQRST";  // GTP skips I

}  // namespace

Board::Board(int size, int max_moves)
    : size_(size), stride_(size + 2), max_moves_(max_moves > 0 ? max_moves : 2 * size * size) {
  if (size < 2 || size > kMaxSize) {
    throw std::invalid_argument("go: board size must be in [2, 19], got " + std::to_string(size));
  }
  color_.fill(kBorder);
  for (int row = 0; row < size_; ++row) {
    for (int column = 0; column < size_; ++column) color_[Point(row, column)] = kEmpty;
  }
  Remember(hash_);
}

bool Board::Seen(uint64_t hash) const {
  if (!seen_filter_.test(hash % kFilterBits)) return false;
  for (uint64_t seen : seen_) {
    if (seen == hash) return true;
  }
  return false;
}

void Board::Remember(uint64_t hash) {
  seen_filter_.set(hash % kFilterBits);
  seen_.push_back(hash);
}

const char* Board::Illegal(int point, uint64_t* next_hash) const {
  if (color_[point] != kEmpty) return "occupied";
  const Color me = to_move_, them = Opponent(to_move_);
  uint64_t hash = hash_ ^ Key(point, me);
  bool has_liberty = false;
  int heads[4];
  int num_heads = 0;
  for (int d = 0; d < 4; ++d) {
    const int neighbor = Neighbor(point, d);
    const Color color = color_[neighbor];
    if (color == kEmpty) has_liberty = true;
    if (color != me && color != them) continue;
    const int head = head_[neighbor];
    bool counted = false;
    for (int i = 0; i < num_heads; ++i) counted = counted || heads[i] == head;
    if (counted) continue;
    heads[num_heads++] = head;
    // The group's pseudo-liberties that are pairs with `point`.
    int adjacent = 0;
    for (int e = 0; e < 4; ++e) adjacent += head_[Neighbor(point, e)] == head && color_[Neighbor(point, e)] == color;
    const bool only_here = libs_[head] == adjacent;
    if (color == them && only_here) {
      hash ^= group_hash_[head];  // captured
      has_liberty = true;
    } else if (color == me && !only_here) {
      has_liberty = true;  // joins a group with another liberty
    }
  }
  if (!has_liberty) return "suicide";
  if (Seen(hash)) return "repeats an earlier position (positional superko)";
  *next_hash = hash;
  return nullptr;
}

bool Board::FillsOwnEye(int action) const {
  const int point = PointOf(action);
  for (int d = 0; d < 4; ++d) {
    const Color neighbor = color_[Neighbor(point, d)];
    if (neighbor != to_move_ && neighbor != kBorder) return false;
  }
  return true;
}

bool Board::HasMoveBesidesEyes() const {
  for (int action = 0; action < pass(); ++action) {
    if (color_[PointOf(action)] == kEmpty && !FillsOwnEye(action) && IsLegal(action)) return true;
  }
  return false;
}

bool Board::IsLegal(int action) const {
  if (action < 0 || action > pass()) return false;
  if (action == pass()) return true;
  uint64_t hash;
  return Illegal(PointOf(action), &hash) == nullptr;
}

void Board::LegalMask(uint8_t* out) const {
  uint64_t hash;
  for (int action = 0; action < size_ * size_; ++action) out[action] = Illegal(PointOf(action), &hash) == nullptr;
  out[pass()] = 1;
}

int Board::Play(int action) {
  if (action < 0 || action > pass()) {
    throw std::invalid_argument("go: move " + std::to_string(action) + " is outside [0, " +
                                std::to_string(pass()) + "]");
  }
  if (Over()) throw std::invalid_argument("go: move " + ActionName(action) + " after the game ended");
  int captured = 0;
  if (action == pass()) {
    ++consecutive_passes_;
  } else {
    uint64_t hash;
    if (const char* why = Illegal(PointOf(action), &hash)) {
      throw std::invalid_argument(std::string("go: illegal move ") + (to_move_ == kBlack ? "B " : "W ") +
                                  ActionName(action) + ": " + why);
    }
    const int point = PointOf(action);
    Place(point, to_move_);
    const Color them = Opponent(to_move_);
    for (int d = 0; d < 4; ++d) {
      const int neighbor = Neighbor(point, d);
      if (color_[neighbor] == them && libs_[head_[neighbor]] == 0) captured += RemoveGroup(head_[neighbor]);
    }
    captures_[to_move_] += captured;
    consecutive_passes_ = 0;
    Remember(hash_);
  }
  last_move_ = action;
  ++moves_played_;
  to_move_ = Opponent(to_move_);
  PushSnapshot();
  return captured;
}

void Board::Place(int point, Color color) {
  color_[point] = color;
  head_[point] = static_cast<int16_t>(point);
  next_[point] = static_cast<int16_t>(point);
  stones_[point] = 1;
  libs_[point] = 0;
  group_hash_[point] = Key(point, color);
  hash_ ^= Key(point, color);
  for (int d = 0; d < 4; ++d) {
    const int neighbor = Neighbor(point, d);
    const Color other = color_[neighbor];
    if (other == kEmpty) {
      ++libs_[point];
    } else if (other == kBlack || other == kWhite) {
      --libs_[head_[neighbor]];  // one (stone, empty) pair fewer
    }
  }
  for (int d = 0; d < 4; ++d) {
    const int neighbor = Neighbor(point, d);
    if (color_[neighbor] == color && head_[neighbor] != head_[point]) Merge(head_[point], head_[neighbor]);
  }
}

// Joins the smaller group into the larger.
void Board::Merge(int head, int other) {
  if (stones_[head] < stones_[other]) std::swap(head, other);
  int stone = other;
  do {
    head_[stone] = static_cast<int16_t>(head);
    stone = next_[stone];
  } while (stone != other);
  std::swap(next_[head], next_[other]);  // splice the two circles
  stones_[head] = static_cast<int16_t>(stones_[head] + stones_[other]);
  libs_[head] = static_cast<int16_t>(libs_[head] + libs_[other]);
  group_hash_[head] ^= group_hash_[other];
}

int Board::RemoveGroup(int head) {
  const Color color = color_[head];
  int removed = 0;
  int stone = head;
  do {
    color_[stone] = kEmpty;
    hash_ ^= Key(stone, color);
    ++removed;
    for (int d = 0; d < 4; ++d) {
      const int neighbor = Neighbor(stone, d);
      if (color_[neighbor] == kBlack || color_[neighbor] == kWhite) ++libs_[head_[neighbor]];
    }
    stone = next_[stone];
  } while (stone != head);
  return removed;
}

void Board::PushSnapshot() {
  snapshot_head_ = (snapshot_head_ + 1) % kHistory;
  auto& snapshot = snapshots_[snapshot_head_];
  for (int row = 0; row < size_; ++row) {
    for (int column = 0; column < size_; ++column) snapshot[row * size_ + column] = color_[Point(row, column)];
  }
}

float Board::Score(float komi) const {
  int area[3] = {0, 0, 0};
  std::array<bool, kMaxPoints> visited{};
  std::array<int16_t, kMaxPoints> stack;
  for (int point = 0; point < stride_ * stride_; ++point) {
    const Color color = color_[point];
    if (color == kBlack || color == kWhite) ++area[color];
    if (color != kEmpty || visited[point]) continue;
    // Flood the empty region; note which colours it reaches.
    int region = 0, top = 0;
    bool reaches[3] = {false, false, false};
    stack[top++] = static_cast<int16_t>(point);
    visited[point] = true;
    while (top > 0) {
      const int at = stack[--top];
      ++region;
      for (int d = 0; d < 4; ++d) {
        const int neighbor = Neighbor(at, d);
        const Color other = color_[neighbor];
        if (other == kEmpty && !visited[neighbor]) {
          visited[neighbor] = true;
          stack[top++] = static_cast<int16_t>(neighbor);
        } else if (other == kBlack || other == kWhite) {
          reaches[other] = true;
        }
      }
    }
    if (reaches[kBlack] != reaches[kWhite]) area[reaches[kBlack] ? kBlack : kWhite] += region;
  }
  return static_cast<float>(area[kBlack] - area[kWhite]) - komi;
}

void Board::Features(uint8_t* planes) const {
  const int area = size_ * size_;
  const Color me = to_move_, them = Opponent(to_move_);
  for (int age = 0; age < kHistory; ++age) {
    uint8_t* mine = planes + age * area;
    uint8_t* theirs = planes + (kHistory + age) * area;
    if (age > moves_played_) {  // before the game began: an empty board
      std::fill(mine, mine + area, 0);
      std::fill(theirs, theirs + area, 0);
      continue;
    }
    const auto& snapshot = snapshots_[(snapshot_head_ + kHistory - age) % kHistory];
    for (int i = 0; i < area; ++i) {
      mine[i] = snapshot[i] == me;
      theirs[i] = snapshot[i] == them;
    }
  }
  std::fill(planes + 2 * kHistory * area, planes + (2 * kHistory + 1) * area, to_move_ == kBlack ? 1 : 0);
  uint8_t* by_liberties = planes + (2 * kHistory + 1) * area;
  std::fill(by_liberties, by_liberties + 2 * kLibertyPlanes * area, 0);
  std::array<int16_t, kMaxPoints> counted_by;
  counted_by.fill(-1);
  std::array<int16_t, kMaxPoints> liberties{};  // at a head, once counted
  for (int action = 0; action < area; ++action) {
    const int point = PointOf(action);
    const Color color = color_[point];
    if (color != kBlack && color != kWhite) continue;
    const int head = head_[point];
    if (liberties[head] == 0) liberties[head] = static_cast<int16_t>(CountLiberties(head, counted_by));
    const int plane = (color == me ? 0 : kLibertyPlanes) + std::min<int>(liberties[head], kLibertyPlanes) - 1;
    by_liberties[plane * area + action] = 1;
  }
}

int Board::CountLiberties(int head, std::array<int16_t, kMaxPoints>& counted_by) const {
  int count = 0;
  int stone = head;
  do {
    for (int d = 0; d < 4; ++d) {
      const int neighbor = Neighbor(stone, d);
      if (color_[neighbor] == kEmpty && counted_by[neighbor] != head) {
        counted_by[neighbor] = static_cast<int16_t>(head);
        ++count;
      }
    }
    stone = next_[stone];
  } while (stone != head);
  return count;
}

int Board::Liberties(int action) const {
  const int point = PointOf(action);
  if (color_[point] != kBlack && color_[point] != kWhite) return 0;
  std::array<int16_t, kMaxPoints> counted_by;
  counted_by.fill(-1);
  return CountLiberties(head_[point], counted_by);
}

std::string Board::ActionName(int action) const {
  if (action == pass()) return "pass";
  if (action < 0 || action > pass()) return "?";
  return std::string(1, kColumns[action % size_]) + std::to_string(size_ - action / size_);
}

int Board::ParseAction(const std::string& vertex) const {
  std::string text;
  for (char c : vertex) text += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  if (text == "PASS") return pass();
  if (text.size() < 2 || text.size() > 3) return -1;
  int column = -1;
  for (int i = 0; i < size_; ++i) {
    if (kColumns[i] == text[0]) column = i;
  }
  int number = 0;
  for (std::size_t i = 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    number = number * 10 + (text[i] - '0');
  }
  if (column < 0 || number < 1 || number > size_) return -1;
  return (size_ - number) * size_ + column;
}

void Board::PlayMoves(const std::string& moves) {
  std::vector<std::string> tokens;
  std::string token;
  for (char c : moves + " ") {
    if (c == ' ' || c == ',' || c == ';') {
      if (!token.empty()) tokens.push_back(token);
      token.clear();
    } else {
      token += c;
    }
  }
  for (const std::string& word : tokens) {
    if (word == "b" || word == "B" || word == "black") {
      to_move_ = kBlack;
    } else if (word == "w" || word == "W" || word == "white") {
      to_move_ = kWhite;
    } else {
      const int action = ParseAction(word);
      if (action < 0) throw std::invalid_argument("go: cannot read move '" + word + "' in '" + moves + "'");
      Play(action);
    }
  }
}

std::string Board::ToString() const {
  std::string out;
  for (int row = 0; row < size_; ++row) {
    for (int column = 0; column < size_; ++column) {
      const Color color = At(row, column);
      out += color == kBlack ? 'X' : color == kWhite ? 'O' : '.';
    }
    out += '\n';
  }
  return out;
}

}  // namespace elf::go
