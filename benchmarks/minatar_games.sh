#!/usr/bin/env bash
# MinAtar's five games with one config and several seeds, through
# rlpytorch.launch: one run per game and seed, JOBS at once, each in its own
# process (the config's one torch thread and one worker process). The games
# are the -v0 ids (all 6 actions), as MinAtar's published curves. Each run's
# progress.csv holds the training mean of the last 100 episodes every 25,000
# frames; `python benchmarks/minatar_table.py OUT` tabulates them beside the
# published DQN. No evaluation at the end: the published figure is of
# training returns.
#
#   bash benchmarks/minatar_games.sh CONFIG OUT [FRAMES] [SEEDS] [JOBS]
#   bash benchmarks/minatar_games.sh dqn_minatar runs/minatar5/dqn 500000 0-2 15
set -euo pipefail
config=${1:?usage: bash benchmarks/minatar_games.sh CONFIG OUT [FRAMES] [SEEDS] [JOBS]}
out=${2:?usage: bash benchmarks/minatar_games.sh CONFIG OUT [FRAMES] [SEEDS] [JOBS]}
frames=${3:-1000000}
seeds=${4:-0-2}
jobs=${5:-2}
games=""
for game in Asterix Breakout Freeway Seaquest SpaceInvaders; do
  games+="${games:+,}gym:MinAtar/$game-v0"
done
exec python3 -m rlpytorch.launch --config "$config" --seeds "$seeds" --set "game=$games" --out "$out" \
  --jobs "$jobs" -- --num_frames "$frames" --log_every 25000 --no-eval_at_end --no-progress
