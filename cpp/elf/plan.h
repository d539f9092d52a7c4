// The plan: what a context is asked to run, fixed before its games start.
// It owns the key catalogue (the game's keys, the engine's, extra reply
// keys), the tags with their configurations, the routes from each seat to
// each tag, and every check of that configuration: AddKey / AddTag reject a
// bad key or tag at once, Validate the routing as a whole (before anything
// is built, so a start that throws leaves the plan as it was). Build then
// lays out the history records and routes the channels to the tags.
//
// The tags' rings and the games are the running context's (context.h);
// the plan only says what they look like.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "elf/history.h"
#include "elf/router.h"
#include "elf/spec.h"
#include "elf/tag.h"

namespace elf {

class Plan {
 public:
  static constexpr std::size_t kMaxTagName = 64;

  // A route: one seat's rows to one tag.
  struct Send {
    int seat;
    int tag;
  };
  // Where a key sits in a history record, and its size.
  struct KeyCopy {
    std::size_t offset;
    std::size_t bytes;
  };
  // Where the engine's per-step keys sit in a record.
  struct HeaderOffsets {
    std::size_t reward, terminal, truncated, episode_return, episode_length;
  };

  Plan(std::string game_name, GameSpec spec);

  // Configuration. An extra reply key (a policy, a value, a recurrent
  // state): the engine declares none itself; whoever replies one declares
  // it here, before any tag.
  void AddKey(KeySpec key);
  int AddTag(TagConfig config);

  // Every check of the routing as a whole: each action of each seat comes
  // from exactly one tag, every reply key a tag reads is replied for its
  // seats, and the router can deliver each tag's batches.
  void Validate(int num_games, const Router& router) const;
  // After Validate: the record layout, the routes, and each tag's channels
  // (channel g * num_seats + seat of `num_games` games).
  void Build(int num_games);

  const std::string& game_name() const { return game_name_; }
  const GameSpec& game_spec() const { return game_spec_; }
  int num_seats() const { return game_spec_.num_seats; }
  const std::vector<KeySpec>& keys() const { return keys_; }
  int num_game_keys() const { return num_game_keys_; }
  int KeyIndex(const std::string& name) const;  // throws, listing the keys
  int TagIndex(const std::string& name) const;  // throws, listing the tags
  int num_tags() const { return static_cast<int>(tags_.size()); }
  Tag& tag(int index) { return *tags_[index]; }
  Tags& tags() { return tags_; }
  const Tags& tags() const { return tags_; }

  // Built by Build.
  const RecordLayout& layout() const { return layout_; }
  const HeaderOffsets& header() const { return header_; }
  int history_length() const { return history_length_; }
  // Per game key: its final_ key, or -1; and whether they are kept (some tag reads one).
  const std::vector<int>& final_keys() const { return final_keys_; }
  bool keep_final() const { return keep_final_; }
  const std::vector<Send>& observation_sends() const { return observation_sends_; }  // tags with replies
  const std::vector<Send>& after_reply_sends() const { return after_reply_sends_; }  // tags without
  const std::vector<KeyCopy>& input_copies(int tag) const { return input_copies_[tag]; }
  const std::vector<KeyCopy>& reply_copies(int tag) const { return reply_copies_[tag]; }

 private:
  void BuildKeys();
  void ValidateReplyReads() const;
  std::vector<bool> StoredKeys();
  static bool Routed(const Tag& tag, int seat);

  std::string game_name_;
  GameSpec game_spec_;
  std::vector<KeySpec> keys_;  // game keys first, in the game's order
  int num_game_keys_ = 0;
  std::vector<int> final_keys_;
  bool keep_final_ = false;
  int reward_key_ = -1, terminal_key_ = -1, truncated_key_ = -1, return_key_ = -1, length_key_ = -1;
  Tags tags_;

  RecordLayout layout_;
  HeaderOffsets header_{};
  int history_length_ = 1;
  std::vector<Send> observation_sends_;  // in (tag, seat) order
  std::vector<Send> after_reply_sends_;
  std::vector<std::vector<KeyCopy>> input_copies_, reply_copies_;
};

}  // namespace elf
