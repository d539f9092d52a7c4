// The reply desk: what happens to a replied batch before its games go on.
// CheckReplies rejects any action reply outside its key's space before a
// single game sees it; SplitReplies cuts the batch's rows into runs that
// each stay on one worker (the home of their games); ScatterReplies copies
// a run's reply columns back into the records the rows came from.
#pragma once

#include <cstdint>
#include <vector>

#include "elf/mailbox.h"
#include "elf/plan.h"
#include "elf/spec.h"
#include "elf/tag.h"

namespace elf {

// The worker that steps a game when it is free (its home): games split into
// num_threads contiguous ranges, so a game's data stays in one core's cache.
struct Homes {
  int num_games;
  int num_threads;
  int Of(int game) const { return static_cast<int>(int64_t{game} * num_threads / num_games); }
  // The first game whose home is `home` (num_games for home num_threads).
  int FirstGame(int home) const {
    return static_cast<int>((int64_t{home} * num_games + num_threads - 1) / num_threads);
  }
};

// Rows [begin, end) of a replied batch, to be copied out on worker `home`.
struct ReplyRun {
  int begin;
  int end;
  int home;
};

// Throws std::invalid_argument naming tag, key, row and game for the first
// action reply of `ref` outside its space: an integer outside its range (per
// component for MultiDiscrete), a Box value that is NaN or infinite. Box
// values outside [low, high] pass: the game clips them.
void CheckReplies(Tag& tag, const std::vector<KeySpec>& keys, const BatchRef& ref);

// Cuts rows [0, size) into consecutive runs covering every row once. A run
// takes at least 16 rows whatever their games' homes (a job per handful of
// rows costs more than the odd row on another core), then goes on while the
// games share the first row's home, to at most max(16, ceil(size / (2
// num_threads))) rows; its home is the first row's.
std::vector<ReplyRun> SplitReplies(const int32_t* game_ids, int size, const Homes& homes);

// Copies rows [begin, end) of every reply column into the record each row
// was written from (BatchBuffer::reply_to), at the key's offset.
void ScatterReplies(BatchBuffer& buffer, const std::vector<Plan::KeyCopy>& copies, int begin, int end);

}  // namespace elf
