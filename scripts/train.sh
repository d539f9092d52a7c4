#!/usr/bin/env bash
# Sets up (skipped when nothing the set-up depends on changed since it last
# ran), then trains the default game (CartPole, ActorCritic) and evaluates
# the trained model greedily. The engine runs deterministically with seed 0,
# so the run is repeatable. Extra arguments go to rlpytorch.train (later
# ones win, e.g. --seed 1 or --no-deterministic).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --if_changed
python3 -m rlpytorch.train --game cartpole --method actor_critic --deterministic "$@"
