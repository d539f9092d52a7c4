// Rng: seedable xoshiro256**, one stream per game.
#include "elf/rng.h"

#include <cstdint>
#include <vector>

#include "check.h"

TEST(same_seed_and_stream_give_the_same_sequence) {
  elf::Rng a(42, 7), b(42, 7);
  for (int i = 0; i < 1000; ++i) CHECK_EQ(a.Next(), b.Next());
}

TEST(reseeding_restarts_the_sequence) {
  elf::Rng rng(3, 1);
  std::vector<uint64_t> first;
  for (int i = 0; i < 10; ++i) first.push_back(rng.Next());
  rng.Seed(3, 1);
  for (int i = 0; i < 10; ++i) CHECK_EQ(rng.Next(), first[i]);
}

TEST(different_streams_and_seeds_differ) {
  elf::Rng base(42, 0), other_stream(42, 1), other_seed(43, 0);
  int same_stream = 0, same_seed = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = base.Next();
    same_stream += x == other_stream.Next();
    same_seed += x == other_seed.Next();
  }
  CHECK_EQ(same_stream, 0);
  CHECK_EQ(same_seed, 0);
}

TEST(uniform_stays_in_range_and_has_the_right_mean) {
  elf::Rng rng(1, 0);
  double sum = 0.0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const double u = rng.Uniform();
    CHECK(u >= 0.0 && u < 1.0);
    sum += u;
  }
  CHECK(sum / n > 0.49 && sum / n < 0.51);
  for (int i = 0; i < 1000; ++i) {
    const double x = rng.Uniform(-0.05, 0.05);
    CHECK(x >= -0.05 && x < 0.05);
  }
}

TEST(below_covers_every_value_evenly) {
  elf::Rng rng(5, 5);
  std::vector<int> counts(7, 0);
  const int n = 70000;
  for (int i = 0; i < n; ++i) {
    const int64_t x = rng.Below(7);
    REQUIRE(x >= 0 && x < 7);
    ++counts[x];
  }
  for (int count : counts) CHECK(count > 9000 && count < 11000);
  CHECK_EQ(rng.Below(1), int64_t{0});
}

int main(int argc, char** argv) { return elf::testing::RunAll(argc, argv); }
