#!/usr/bin/env bash
# The GPU machine's figures in one run: builds the project, runs the tests
# that use CUDA when it is there, then measures Atari stepping through the
# engine (hosted workers and the envpool source) beside envpool alone
# (bench_pygames, 64 and 256 games) and the learner's speed (bench_gpu: real
# over synthetic, then eager against NCHW, compiled and bf16),
# writing every table to OUT_DIR. Meant for a 16-core machine with one GPU
# and Python, PyTorch (CUDA), CMake and pybind11 installed; about 8 minutes.
#
#   bash benchmarks/gpu_suite.sh OUT_DIR                # every part
#   bash benchmarks/gpu_suite.sh OUT_DIR tests atari    # some: tests, atari, learner
#
# Packages such a machine may lack (gymnasium, ale-py, envpool and what they
# need) are read from the folder GPU_SITE names, if set: a folder made on a
# machine with pip, `pip install --target DIR --python-version 3.12
# --only-binary=:all: --no-deps WHEELS` (envpool also needs its Atari ROM
# from envpool-assets). COMMIT names the commit measured when the copy of the
# tree carries no git history.
set -euo pipefail
out=${1:?usage: bash benchmarks/gpu_suite.sh OUT_DIR [tests] [atari] [learner]}
shift
parts=" ${*:-tests atari learner} "
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -n "${GPU_SITE:-}" ]; then export PYTHONPATH="$(cd "$GPU_SITE" && pwd)${PYTHONPATH:+:$PYTHONPATH}"; fi
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}

{
  echo "commit: $commit"
  echo "cores: $(nproc)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no GPU"
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
} | tee "$out/machine.txt"

step() { echo; echo "== $1 ($(date +%T))"; }

step build
python3 -m pip install --quiet --no-build-isolation --no-deps -e . 2>&1 | tail -n 3

if [[ $parts == *" tests "* ]]; then
  step "tests that use CUDA when it is there"
  python3 -m pytest -q -p no:cacheprovider tests/rlpytorch/test_gpu_path.py tests/rlpytorch/test_replay.py \
    tests/rlpytorch/test_sampler.py tests/rlpytorch/test_models.py tests/rlpytorch/test_compile.py \
    tests/rlpytorch/test_edge_properties.py tests/interop/test_envpool.py 2>&1 | tee "$out/tests.txt" | tail -n 5 \
    || echo "(tests failed: see tests.txt)"
fi

if [[ $parts == *" atari "* ]]; then
  step "Atari stepping, random actions: through the engine (hosted, envpool source) beside envpool alone"
  for games in 64 256; do
    python3 benchmarks/bench_pygames.py --configs atari --num_envs "$games" --workers "$(nproc)" \
      --libraries elfpy elfpy_half elfpy_envpool elfpy_envpool_half envpool --repeats 3 --seconds 3 2>&1 | grep -v -e "Stella" -e "A.L.E" \
      | tee -a "$out/pygames.txt"
  done
fi

if [[ $parts == *" learner "* ]]; then
  step "the learner: synthetic ceiling and real training"
  python3 benchmarks/bench_gpu.py --seconds 4 --out "$out/bench_gpu.md" 2>&1 | tail -n 12
  python3 benchmarks/bench_gpu.py --seconds 3 --games pong,cartpole,minirts \
    --compare eager,nchw,reduce-overhead,reduce-overhead+bf16 --out "$out/compare.md" 2>&1 | tail -n 12
fi
step done
