// The rules of the MiniRTS variants that the standard game lacks: capture the
// flag's flags and tower defense's waves (see world.h for the rules in words).
#include <stdexcept>

#include "games/rts/world.h"

namespace elf::minirts {

const std::vector<std::string>& VariantNames() {
  static const std::vector<std::string> names = {"standard", "ctf", "tower_defense"};
  return names;
}

const char* VariantName(Variant variant) {
  switch (variant) {
    case Variant::kStandard: return "standard";
    case Variant::kCaptureTheFlag: return "ctf";
    case Variant::kTowerDefense: return "tower_defense";
  }
  return "?";
}

Variant ParseVariant(const std::string& name, const std::string& option) {
  if (name == "standard") return Variant::kStandard;
  if (name == "ctf") return Variant::kCaptureTheFlag;
  if (name == "tower_defense") return Variant::kTowerDefense;
  std::string valid;
  for (const auto& known : VariantNames()) valid += (valid.empty() ? "" : ", ") + known;
  throw std::invalid_argument("option '" + option + "': unknown variant '" + name + "'; valid choices: " + valid);
}

namespace {
bool IsTroop(const Unit& u) { return u.type == kMelee || u.type == kRanged; }
}  // namespace

// Each flag stands one tile behind its base, toward the corner.
void World::ResetFlags() {
  for (int p = 0; p < 2; ++p) {
    const int sign = p == 0 ? 1 : -1;
    Flag& flag = flags_[p];
    flag = Flag{};
    flag.home_x = flag.x = static_cast<int16_t>(map_.BaseX(p) - sign);
    flag.home_y = flag.y = static_cast<int16_t>(map_.BaseY(p) - sign);
  }
}

void World::UpdateFlags() {
  bool captured[2] = {false, false};
  for (int p = 0; p < 2; ++p) {
    Flag& flag = flags_[p];
    const Flag& own = flags_[1 - p];  // the carrier's own flag: where it scores
    if (flag.carrier >= 0) {
      Unit& carrier = units_[flag.carrier];
      if (carrier.uid != flag.carrier_uid || !carrier.Alive()) {
        flag.carrier = -1;  // dropped where the carrier last stood
        flag.carrier_uid = 0;
      } else {
        flag.x = carrier.x;
        flag.y = carrier.y;
        if (Chebyshev(carrier.x, carrier.y, own.home_x, own.home_y) <= 1) {
          captured[1 - p] = true;
        } else if (carrier.order != Order::kMove || carrier.tx != own.home_x || carrier.ty != own.home_y) {
          OrderMove(flag.carrier, own.home_x, own.home_y, /*attack_move=*/false);
        }
        continue;
      }
    }
    // On the ground: its owner's units return it, enemy troops pick it up.
    int picker = -1;
    bool returned = false;
    for (int s = 0; s < end_ && !returned; ++s) {
      const Unit& u = units_[s];
      if (!u.Alive() || StatsOf(u.type).building || Chebyshev(u.x, u.y, flag.x, flag.y) > 1) continue;
      if (u.player == p) {
        returned = !flag.AtHome();
      } else if (IsTroop(u) && picker < 0) {
        picker = s;
      }
    }
    if (returned) {
      flag.x = flag.home_x;
      flag.y = flag.home_y;
    } else if (picker >= 0) {
      flag.carrier = static_cast<int16_t>(picker);
      flag.carrier_uid = units_[picker].uid;
      flag.x = units_[picker].x;
      flag.y = units_[picker].y;
      OrderMove(picker, own.home_x, own.home_y, /*attack_move=*/false);
      if (Chebyshev(flag.x, flag.y, own.home_x, own.home_y) <= 1) captured[1 - p] = true;
    }
  }
  const bool win0 = winner_ == 0 || winner_ == 2 || captured[0];
  const bool win1 = winner_ == 1 || winner_ == 2 || captured[1];
  if (win0 || win1) winner_ = win0 && win1 ? 2 : (win0 ? 0 : 1);
}

// Wave k (from 0) brings 2 + k troops, every third one ranged, around player
// 1's corner; they attack-move on player 0's base.
void World::SpawnWave() {
  const int size = 2 + waves_spawned_;
  ++waves_spawned_;
  const int cx = map_.BaseX(1), cy = map_.BaseY(1);
  for (int i = 0; i < size; ++i) {
    int x = cx, y = cy;
    if (!Free(x, y) && !FreeTileNear(cx, cy, 4, &x, &y, -1)) return;  // the corner is full
    const int slot = Spawn(1, i % 3 == 2 ? kRanged : kMelee, x, y);
    if (slot < 0) return;
    if (base_slot_[0] >= 0) OrderAttack(slot, base_slot_[0], /*attack_move=*/true);
  }
}

}  // namespace elf::minirts
