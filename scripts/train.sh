#!/usr/bin/env bash
# Sets up, then trains the default game (CartPole, ActorCritic) and evaluates
# the trained model greedily. Extra arguments go to examples/train.py.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 examples/train.py --game cartpole --method actor_critic "$@"
