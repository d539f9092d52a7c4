// The calling thread's CPU time: what the engine measures a batch's work by
// (Context), and what a test game burns to be given a known amount of work.
#pragma once

#include <time.h>

#include <cstdint>

namespace elf {

inline int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace elf
