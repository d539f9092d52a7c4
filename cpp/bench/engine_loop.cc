// The engine's own speed, without Python: a loop that drives a Context as
// the binding does (Wait, random actions written into the reply buffer,
// SubmitReplies), CartPole games, one tag "actor". For A/B runs of engine
// changes (interleave builds, compare medians) and to price a part of the
// engine by changing the tag (e.g. fewer input keys).
//
//   engine_loop --games 4096 --threads 2 --batch 4096 --milliseconds 500 --inputs s,r,terminal
// prints one line: "steps_per_s <rate> cpu_ns_per_step <process CPU time per step>".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "elf/context.h"

namespace {

std::string Arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return fallback;
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t comma; (comma = text.find(',', begin)) != std::string::npos; begin = comma + 1) {
    parts.push_back(text.substr(begin, comma - begin));
  }
  parts.push_back(text.substr(begin));
  return parts;
}

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int games = std::atoi(Arg(argc, argv, "--games", "4096").c_str());
  const int threads = std::atoi(Arg(argc, argv, "--threads", "2").c_str());
  const int batch = std::atoi(Arg(argc, argv, "--batch", std::to_string(games)).c_str());
  const double seconds = std::atoi(Arg(argc, argv, "--milliseconds", "500").c_str()) / 1000.0;
  elf::Context ctx("cartpole", games, threads, 0, false, elf::Options());
  elf::TagConfig actor;
  actor.name = "actor";
  actor.batch_size = batch;
  actor.inputs = Split(Arg(argc, argv, "--inputs", "s,r,terminal"));
  actor.replies = {"a"};
  ctx.AddTag(actor);
  ctx.Start();
  elf::Rng rng(1, 0);
  auto step = [&] {
    std::optional<elf::BatchRef> ref;
    while (!(ref = ctx.Wait(1000))) {
    }
    auto* a = static_cast<int64_t*>(ctx.tag(0).buffer(ref->buffer).Reply(0, 0, sizeof(int64_t)));
    for (int row = 0; row < ref->size; ++row) a[row] = static_cast<int64_t>(rng.Next() >> 63);
    ctx.SubmitReplies(*ref);
    return ref->size;
  };
  const double warm_until = Seconds() + 0.2 * seconds;
  while (Seconds() < warm_until) step();
  const double start = Seconds();
  const std::clock_t cpu_start = std::clock();
  int64_t steps = 0;
  while (Seconds() - start < seconds) steps += step();
  const double wall = Seconds() - start;
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  std::printf("steps_per_s %.0f cpu_ns_per_step %.1f\n", steps / wall, cpu * 1e9 / static_cast<double>(steps));
  ctx.Stop();
  return 0;
}
