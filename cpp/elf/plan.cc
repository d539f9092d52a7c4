#include "elf/plan.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace elf {

namespace {

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "(none)" : joined;
}

KeySpec EngineKey(const char* name, DType dtype, const char* meaning) {
  return {name, dtype, {}, meaning, KeyRole::kEngine, std::nullopt};
}

}  // namespace

Plan::Plan(std::string game_name, GameSpec spec) : game_name_(std::move(game_name)), game_spec_(std::move(spec)) {
  for (auto& key : game_spec_.keys) CompleteSpace(key);
  BuildKeys();
}

void Plan::BuildKeys() {
  keys_ = game_spec_.keys;
  num_game_keys_ = static_cast<int>(keys_.size());
  auto add = [this](KeySpec key) {
    keys_.push_back(std::move(key));
    return static_cast<int>(keys_.size()) - 1;
  };
  reward_key_ = add(EngineKey(keys::kReward, DType::kFloat32, "reward for the previous action"));
  terminal_key_ = add(EngineKey(keys::kTerminal, DType::kBool,
                                "the previous action ended the episode; s is the next episode's first state"));
  truncated_key_ = add(EngineKey(keys::kTruncated, DType::kBool,
                                 "the episode that just ended was cut short by a time limit"));
  return_key_ = add(EngineKey(keys::kEpisodeReturn, DType::kFloat32,
                              "return of the current episode so far; on a terminal row, of the one that ended"));
  length_key_ = add(EngineKey(keys::kEpisodeLength, DType::kInt32,
                              "steps of the current episode so far; on a terminal row, of the one that ended"));
  // The last observation of an episode that ended, for each observation key.
  final_keys_.assign(num_game_keys_, -1);
  for (int key = 0; key < num_game_keys_; ++key) {
    const KeySpec& observed = game_spec_.keys[key];
    if (observed.role != KeyRole::kObservation) continue;
    final_keys_[key] = add({"final_" + observed.name, observed.dtype, observed.shape,
                            "on a terminal row, '" + observed.name + "' of the state the episode ended in",
                            KeyRole::kEngine, std::nullopt});
  }
}

void Plan::AddKey(KeySpec key) {
  if (!tags_.empty()) throw std::logic_error("add_key must come before add_tag");
  for (const auto& existing : keys_) {
    if (existing.name == key.name) throw std::invalid_argument("key '" + key.name + "' already exists");
  }
  key.role = KeyRole::kExtra;
  keys_.push_back(std::move(key));
}

int Plan::KeyIndex(const std::string& name) const {
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i].name == name) return static_cast<int>(i);
  }
  std::vector<std::string> names;
  for (const auto& key : keys_) names.push_back(key.name);
  throw std::invalid_argument("unknown key " + Quote(name) + " for game '" + game_name_ +
                              "'; valid keys: " + JoinNames(names));
}

int Plan::TagIndex(const std::string& name) const {
  for (const auto& tag : tags_) {
    if (tag->name() == name) return tag->index();
  }
  std::vector<std::string> names;
  for (const auto& tag : tags_) names.push_back(tag->name());
  throw std::invalid_argument("unknown tag " + Quote(name) + "; valid tags: " + JoinNames(names));
}

int Plan::AddTag(TagConfig config) {
  // A tag's name recurs in every message about its batches, so it is kept short.
  if (config.name.empty() || config.name.size() > kMaxTagName) {
    throw std::invalid_argument("tag " + Quote(config.name) + ": a tag's name must be 1 to " +
                                std::to_string(kMaxTagName) + " characters");
  }
  const std::string where = "tag '" + config.name + "': ";
  for (const auto& tag : tags_) {
    if (tag->name() == config.name) throw std::invalid_argument(where + "added twice");
  }
  if (config.batch_size < 1) throw std::invalid_argument(where + "batch_size must be >= 1");
  if (config.T < 1) throw std::invalid_argument(where + "T must be >= 1");
  if (config.min_batch < 1 || config.min_batch > config.batch_size) {
    throw std::invalid_argument(where + "min_batch must be in [1, batch_size]");
  }
  if (config.inputs.empty()) throw std::invalid_argument(where + "needs at least one input key");
  if (!config.replies.empty() && config.T > 1) {
    throw std::invalid_argument(where + "a tag with replies must have T = 1 (its games wait on every step)");
  }
  for (std::size_t i = 0; i < config.seats.size(); ++i) {
    const int seat = config.seats[i];
    if (std::count(config.seats.begin(), config.seats.begin() + i, seat) > 0) {
      throw std::invalid_argument(where + "seat " + std::to_string(seat) + " listed twice");
    }
    if (seat < 0 || seat >= num_seats()) {
      throw std::invalid_argument(where + "seat " + std::to_string(seat) + " out of range; game '" +
                                  game_name_ + "' has " + std::to_string(num_seats()) + " seat(s)");
    }
  }
  std::vector<int> inputs, replies;
  for (const auto& name : config.inputs) {
    const int key = KeyIndex(name);
    if (!config.replies.empty() && keys_[key].IsReply()) {
      throw std::invalid_argument(where + "input '" + name +
                                  "' is a reply key: a tag with replies only sees what exists before it replies");
    }
    inputs.push_back(key);
  }
  for (const auto& name : config.replies) {
    const int key = KeyIndex(name);
    if (!keys_[key].IsReply()) {
      throw std::invalid_argument(where + "key '" + name + "' is written by the game or engine, not a reply");
    }
    replies.push_back(key);
  }
  const int index = static_cast<int>(tags_.size());
  tags_.push_back(std::make_unique<Tag>(std::move(config), index));
  tags_.back()->SetKeys(std::move(inputs), std::move(replies));
  return index;
}

void Plan::Validate(int num_games, const Router& router) const {
  if (tags_.empty()) throw std::invalid_argument("add at least one tag before start()");
  for (const auto& tag : tags_) {
    const auto& seats = tag->config().seats;
    const int routed = num_games * (seats.empty() ? num_seats() : static_cast<int>(seats.size()));
    router.CheckDeliverable(*tag, routed);
  }
  ValidateReplyReads();
  for (int seat = 0; seat < num_seats(); ++seat) {
    for (int key = 0; key < num_game_keys_; ++key) {
      if (keys_[key].role != KeyRole::kAction) continue;
      int repliers = 0;
      for (const auto& tag : tags_) {
        const auto& replies = tag->reply_keys();
        if (Routed(*tag, seat) && std::count(replies.begin(), replies.end(), key) > 0) ++repliers;
      }
      if (repliers != 1) {
        throw std::invalid_argument("seat " + std::to_string(seat) + " of game '" + game_name_ +
                                    "' needs action '" + keys_[key].name + "' from exactly one tag, but " +
                                    std::to_string(repliers) + " tag(s) reply it");
      }
    }
  }
}

// A tag that reads a reply key gets it from the history, where only a tag
// with replies writes it: without one for the seat, the rows would hold
// whatever an earlier step left there.
void Plan::ValidateReplyReads() const {
  for (const auto& reader : tags_) {
    for (int key : reader->input_keys()) {
      if (!keys_[key].IsReply()) continue;
      for (int seat = 0; seat < num_seats(); ++seat) {
        if (!Routed(*reader, seat)) continue;
        bool written = false;
        for (const auto& writer : tags_) {
          const auto& replies = writer->reply_keys();
          written = written || (Routed(*writer, seat) && std::count(replies.begin(), replies.end(), key) > 0);
        }
        if (written) continue;
        throw std::invalid_argument("tag '" + reader->name() + "' reads key '" + keys_[key].name +
                                    "', which no tag with replies replies" +
                                    (num_seats() > 1 ? " for seat " + std::to_string(seat) : std::string()) +
                                    ": add it to the replies of the tag that acts, or drop it from the inputs");
      }
    }
  }
}

void Plan::Build(int num_games) {
  layout_ = RecordLayout(keys_, StoredKeys());
  header_ = {layout_.offset(reward_key_), layout_.offset(terminal_key_), layout_.offset(truncated_key_),
             layout_.offset(return_key_), layout_.offset(length_key_)};
  for (const auto& tag : tags_) {
    for (int seat = 0; seat < num_seats(); ++seat) {
      if (!Routed(*tag, seat)) continue;
      auto& sends = tag->has_replies() ? observation_sends_ : after_reply_sends_;
      sends.push_back({seat, tag->index()});
    }
  }
  // A window of T steps needs the last T records; a tag with replies only the current one.
  history_length_ = 1;
  for (const auto& send : after_reply_sends_) history_length_ = std::max(history_length_, tags_[send.tag]->T());
  input_copies_.assign(num_tags(), {});
  reply_copies_.assign(num_tags(), {});
  for (auto& tag : tags_) {
    for (int key : tag->input_keys()) input_copies_[tag->index()].push_back({layout_.offset(key), keys_[key].Bytes()});
    for (int key : tag->reply_keys()) reply_copies_[tag->index()].push_back({layout_.offset(key), keys_[key].Bytes()});
    for (int id = 0; id < num_games * num_seats(); ++id) {
      if (Routed(*tag, id % num_seats())) tag->AddChannel(id);
    }
  }
}

bool Plan::Routed(const Tag& tag, int seat) {
  const auto& seats = tag.config().seats;
  return seats.empty() || std::count(seats.begin(), seats.end(), seat) > 0;
}

// Keys a record must hold: the game's own (it writes them all), the engine's,
// and any other key a tag reads or replies. `final_` keys are written only if
// stored.
std::vector<bool> Plan::StoredKeys() {
  std::vector<bool> is_final(keys_.size(), false);
  for (int key : final_keys_) {
    if (key >= 0) is_final[key] = true;
  }
  std::vector<bool> stored(keys_.size(), false);
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const bool engine = keys_[i].role == KeyRole::kEngine && !is_final[i];
    stored[i] = static_cast<int>(i) < num_game_keys_ || engine;
  }
  for (const auto& tag : tags_) {
    for (int key : tag->input_keys()) stored[key] = true;
    for (int key : tag->reply_keys()) stored[key] = true;
  }
  // Keeping one final_ key means observing the ended state: keep them all.
  keep_final_ = false;
  for (int key : final_keys_) keep_final_ = keep_final_ || (key >= 0 && stored[key]);
  for (int key : final_keys_) {
    if (key >= 0) stored[key] = keep_final_;
  }
  return stored;
}

}  // namespace elf
