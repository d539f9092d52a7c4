#!/usr/bin/env bash
# Device only: builds, then plays games FIRST..LAST of the declared match in 16 workers (GPU evaluator).
set -u
first=${1:-50}; last=${2:-99}; deadline=$((SECONDS + ${3:-540}))
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 PATH=$PWD/.devgo/bin:$PATH
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .devgo/whl/*.whl && export PYTHONPATH=/tmp/site
{ nproc; nvidia-smi -L; python3 -c "import torch; print('torch', torch.__version__, torch.cuda.is_available())"; } 2>&1
start=$SECONDS
[ -n "${SKIP_BUILD:-}" ] || python3 -m pip install --quiet --no-build-isolation --no-deps -e . 2>&1 | tail -n 3
echo "build: $((SECONDS - start)) s"
which gnugo; gnugo --version | head -1
python3 - <<'PY'
import time, numpy as np, sys
sys.argv = ["x"]
src = open(".devgo/runner.py").read().replace("bench_go.main()\n", "")
g = {"__file__": ".devgo/runner.py", "__name__": "r"}
exec(compile(src, "runner", "exec"), g)
from elfpy.go import play
ev = g["module_evaluator"]("")
for playouts in (3200, 12800) if "cuda" in g["DEVICE"] else ():
    t = time.perf_counter()
    r = play.search(ev, 9, 7.5, [], "b", playouts, leaves=32, pass_only_when_done=True)
    print(f"one search on cuda, {playouts} playouts, leaves 32: {time.perf_counter() - t:.2f} s, move {r.action}")
PY
mkdir -p /tmp/goworkers; workers=${WORKERS:-16}; n=$((last - first + 1)); pids=()
for w in $(seq 0 $((workers - 1))); do
  a=$((first + w * n / workers)); b=$((first + (w + 1) * n / workers))
  [ $b -gt $a ] || continue
  python3 .devgo/runner.py gnugo --load pretrained/go9_selfplay_65M.pt2 --level 10 --games $((b - a)) --first_game $a \
    --playouts ${PLAYOUTS:-12800} --leaves 32 --pass_only_when_done --sampled_moves 4 > /tmp/goworkers/w$a.log 2>&1 &
  pids+=($!)
done
while [ $SECONDS -lt $deadline ] && [ -n "$(jobs -rp)" ]; do sleep 5; done
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
sleep 1
for f in /tmp/goworkers/w*.log; do echo "== $f"; cat "$f"; done | tee "${OUT:-/tmp}/games.log"
echo "finished at $SECONDS s"
