// Drives an elf::Context from C++ the way the Python binding does: Wait for a
// batch, read its input arrays, write its reply arrays in place, then
// SubmitReplies (tags with replies) or Release (tags without).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "check.h"
#include "elf/context.h"

namespace elf::testing {

// The next batch. No time limit of its own: how long a batch takes depends on
// the machine's load, so a stuck engine is caught by the watchdog (check.h),
// which names the test.
inline BatchRef NextBatch(Context& ctx) {
  for (;;) {
    if (auto ref = ctx.Wait(50)) return *ref;
  }
}

inline int IndexOf(const std::vector<std::string>& names, const std::string& name) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  Fail(__FILE__, __LINE__, "the tag has no key '" + name + "'");
  throw Abort{};
}

// Input `key` of a batch: [T, capacity, ...] elements of type V, time-major;
// element (t, row, e) is at (t * capacity + row) * elements + e.
template <typename V>
V* Input(Context& ctx, const BatchRef& ref, const std::string& key) {
  Tag& tag = ctx.tag(ref.tag);
  const int i = IndexOf(tag.config().inputs, key);
  REQUIRE(ctx.keys()[tag.input_keys()[i]].dtype == DTypeOf<V>::value);
  return reinterpret_cast<V*>(tag.buffer(ref.buffer).inputs[i].data());
}

// Reply `key` of a batch: [capacity, ...] elements of type V.
template <typename V>
V* Reply(Context& ctx, const BatchRef& ref, const std::string& key) {
  Tag& tag = ctx.tag(ref.tag);
  const int i = IndexOf(tag.config().replies, key);
  REQUIRE(ctx.keys()[tag.reply_keys()[i]].dtype == DTypeOf<V>::value);
  return static_cast<V*>(tag.buffer(ref.buffer).Reply(i, 0, 0));
}

inline const int32_t* GameIds(Context& ctx, const BatchRef& ref) {
  return ctx.tag(ref.tag).buffer(ref.buffer).game_ids.data();
}
inline const int32_t* Seats(Context& ctx, const BatchRef& ref) {
  return ctx.tag(ref.tag).buffer(ref.buffer).seats.data();
}

// Hands a batch back: replies if the tag has them, else a release.
inline void Finish(Context& ctx, const BatchRef& ref) {
  if (ctx.tag(ref.tag).has_replies()) {
    ctx.SubmitReplies(ref);
  } else {
    ctx.Release(ref);
  }
}

inline TagConfig MakeTag(const std::string& name, int batch_size, std::vector<std::string> inputs,
                         std::vector<std::string> replies = {}, int T = 1, std::vector<int> seats = {}) {
  TagConfig config;
  config.name = name;
  config.batch_size = batch_size;
  config.inputs = std::move(inputs);
  config.replies = std::move(replies);
  config.T = T;
  config.seats = std::move(seats);
  return config;
}

// Declares the reply keys an actor-critic actor replies beside its action:
// `pi` (its policy over `num_actions` actions) and `V` (its value). The
// engine declares neither; whoever replies them does.
inline void AddPolicyKeys(Context& ctx, int64_t num_actions) {
  ctx.AddKey({"pi", DType::kFloat32, {num_actions}, "the actor's policy", KeyRole::kExtra, std::nullopt});
  ctx.AddKey({"V", DType::kFloat32, {}, "the actor's value estimate", KeyRole::kExtra, std::nullopt});
}

// A reply that tests can recompute from what the engine sends back.
inline int64_t PolicyAction(int game, int64_t count, int num_actions) {
  uint64_t x = static_cast<uint64_t>(game) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(count) * 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  return static_cast<int64_t>(x % static_cast<uint64_t>(num_actions));
}

}  // namespace elf::testing
