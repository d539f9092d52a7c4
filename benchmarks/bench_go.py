#!/usr/bin/env python
"""Go benchmarks; results on the page benchmarks/README.md ("Go"), their story in docs/results/2026-11-28-go.md.

    python benchmarks/bench_go.py playouts            # C++ random playouts per second, one core
    python benchmarks/bench_go.py rules --games 2000  # rules vs OpenSpiel's go, move by move
    python benchmarks/bench_go.py sims                # simulations/s with a network: batch size x threads,
                                                      # beside OpenSpiel's Python MCTSBot with the same network
    python benchmarks/bench_go.py selfplay --num_frames 200000   # a self-play run (its curve: progress.csv)
    python benchmarks/bench_go.py gnugo --load net.pt2 --games 10 --playouts 200 --pass_only_when_done
                                                      # vs GNU Go level 1 over GTP (Tromp-Taylor rules)
    python benchmarks/bench_go.py versus --load net.pt2 --games 10 --playouts 64  # vs the same search, no network
    python benchmarks/bench_go.py mctsbot --load net.pt2 --games 100 --playouts 200 --pass_only_when_done
                                                      # vs OpenSpiel MCTSBot, random rollouts, 1000
                                                      # simulations (about 24 s a game; --first_game splits it)

`playouts` runs the C++ test `test_go random_playouts...`, which times 1000
uniformly random 9x9 games (no filling of one's own single-point eyes; 162
moves at most, OpenSpiel's limit) on one thread; build it first with
`bash scripts/test_cpp.sh -R test_go`. `playouts`, `rules` and `sims` take
`--record`, which appends their figures to benchmarks/results.jsonl.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import functools  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import report  # noqa: E402
import torch  # noqa: E402

import elfpy  # noqa: E402
from elfpy.go import play  # noqa: E402
from elfpy.go.gnugo import GnuGo, play_game  # noqa: E402
from elfpy.go.openspiel import compare_random_games, to_openspiel  # noqa: E402
from elfpy.gtp import GtpEngine, load_evaluator  # noqa: E402
from rlpytorch.models.policy_value import PolicyValueNet, PolicyValueSettings, masked_policy  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def bench_playouts(args) -> None:
    binary = ROOT / "build" / "cpp" / "test_go"
    rates = []
    for _ in range(args.repeats):
        run = subprocess.run([str(binary), "random_playouts"], capture_output=True, text=True, check=True)
        found = re.search(r"random playouts: (\d+) /s per CPU second, (\d+) /s wall", run.stderr)
        rates.append((float(found.group(1)), float(found.group(2))))
    print(f"9x9 random playouts, one thread: median {statistics.median(r[1] for r in rates):.0f} per wall second")
    report.publish([dict(benchmark="go", row="random 9x9 playouts, one thread", metric="playouts per CPU second",
                         unit="", values=[r[0] for r in rates], better="higher")], args)


def bench_rules(args) -> None:
    import pyspiel

    start, cpu = time.perf_counter(), time.process_time()
    rules = compare_random_games(args.games, board_size=args.board_size, seed=args.seed)
    print(rules)
    print(f"{time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} s CPU")
    board = "" if args.board_size == 9 else f" {args.board_size}x{args.board_size}"  # the page's rows: 9x9
    report.publish([dict(benchmark="go", row=f"engine's go against OpenSpiel {pyspiel.__version__}, "
                                             f"{args.games} random{board} games",
                         metric=f"disagreements in legal moves, {rules.moves:,} positions", unit="",
                         values=[rules.legal_mismatches], better="lower")], args)


def network_evaluator(net: PolicyValueNet, device: str = "cpu"):
    """fn(s, legal) -> (policy, value) with the network on ``device``, batched."""
    net.eval().to(device)

    def evaluate(s: np.ndarray, legal: np.ndarray):
        with torch.inference_mode():
            logits, value = net(torch.from_numpy(s).to(device))
            policy = masked_policy(logits, torch.from_numpy(legal).to(device))
            return policy.cpu().numpy(), value.cpu().numpy()

    return evaluate


def engine_sims_per_second(evaluator, num_games: int, leaves: int, threads: int, frames: int) -> tuple[float, float]:
    """Leaf evaluations (simulations) per wall and per CPU second of self-play."""
    gc = elfpy.GameContext("go_mcts", num_games=num_games, num_threads=threads, seed=0, playouts=200, leaves=leaves,
                           resign_threshold=-1)
    gc.add_tag("eval", batch_size=num_games * leaves, inputs=["s", "legal"], replies=["policy", "value"])
    done = 0

    def callback(batch):
        nonlocal done
        done += len(batch)
        policy, value = evaluator(batch["s"], batch["legal"])
        return {"policy": policy, "value": value}

    gc.reg_callback("eval", callback)
    with gc:
        for _ in range(3):
            gc.run()  # warm up
        done = 0
        start, cpu = time.perf_counter(), time.process_time()
        while done < frames:
            gc.run()
        return done / (time.perf_counter() - start), done / (time.process_time() - cpu)


@functools.lru_cache
def feature_planes(size: int) -> int:
    """Planes of the Go games' features ``s``."""
    return elfpy.GameContext("go", num_games=1, num_threads=1, board_size=size).spec()["s"].shape[0]


def openspiel_features(state, size: int) -> np.ndarray:
    """Our planes from an OpenSpiel state's current stones (history and
    liberty planes left empty: the cost of the network call is what is compared)."""
    planes = np.zeros((feature_planes(size), size, size), np.uint8)
    obs = np.asarray(state.observation_tensor(0), np.float32).reshape(4, size, size)[:, ::-1]
    black_to_move = state.current_player() == 0
    mine, theirs = (obs[0], obs[1]) if black_to_move else (obs[1], obs[0])
    planes[0], planes[8] = mine > 0, theirs > 0
    planes[16] = 1 if black_to_move else 0
    return planes


class NetworkEvaluator:
    """OpenSpiel's mcts.Evaluator interface over the same network, one leaf per call."""

    def __init__(self, net: PolicyValueNet, size: int) -> None:
        self.net, self.size = net.eval(), size
        self.device = next(net.parameters()).device

    def _run(self, state):
        legal = np.zeros((1, self.size * self.size + 1), np.uint8)
        actions = state.legal_actions()
        for a in actions:
            legal[0, to_openspiel(a, self.size)] = 1
        with torch.inference_mode():
            logits, value = self.net(torch.from_numpy(openspiel_features(state, self.size)[None]).to(self.device))
            policy = masked_policy(logits, torch.from_numpy(legal).to(self.device))[0].cpu().numpy()
        return actions, policy, float(value[0])

    def evaluate(self, state):
        if state.is_terminal():
            return np.array(state.returns())
        _, _, value = self._run(state)
        mover = state.current_player()
        return np.array([value, -value] if mover == 0 else [-value, value])

    def prior(self, state):
        actions, policy, _ = self._run(state)
        return [(a, float(policy[to_openspiel(a, self.size)])) for a in actions]


def bench_sims(args) -> None:
    import pyspiel
    from open_spiel.python.algorithms import mcts

    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = PolicyValueNet(feature_planes(9), 9, 82, PolicyValueSettings(args.channels, args.blocks))
    evaluator = network_evaluator(net, args.device)
    print(f"network: {args.channels} channels, {args.blocks} blocks on {args.device}; torch threads 1")
    print("engine (go_mcts, C++ search, one network call per batch of leaves):")
    # The page's rows: on the CPU, sims per CPU second; on a GPU, per wall second.
    cpu_only = args.device == "cpu"
    metric, column = ("sims per CPU second", 1) if cpu_only else ("sims/s, wall", 0)
    peer = "OpenSpiel MCTSBot (Python)" + ("" if cpu_only else ", GPU")
    figures = []
    for threads in args.threads:
        for games, leaves in args.shapes:
            rates = [engine_sims_per_second(evaluator, games, leaves, threads, args.frames)
                     for _ in range(args.repeats)]
            wall = statistics.median(r[0] for r in rates)
            cpu = statistics.median(r[1] for r in rates)
            print(f"  threads {threads} games {games:3d} leaves {leaves} batch {games * leaves:4d}: "
                  f"{wall:7.0f} sims/s wall, {cpu:7.0f} per CPU s", flush=True)
            row = (f"engine search, {threads} thread{'s' if threads > 1 else ''}, {games} games x {leaves} leaves"
                   if cpu_only else f"engine search on the GPU, {threads} threads, {games} x {leaves} leaves")
            figures.append(dict(benchmark="go", row=row, metric=metric, unit="", values=[r[column] for r in rates],
                                better="higher", peer=peer))
    game = pyspiel.load_game("go", {"board_size": 9, "komi": play.KOMI})
    bot = mcts.MCTSBot(game, uct_c=1.5, max_simulations=args.openspiel_sims, evaluator=NetworkEvaluator(net, 9),
                       solve=False, random_state=np.random.RandomState(0))
    rates = []
    for _ in range(args.repeats):
        state = game.new_initial_state()
        start, cpu = time.perf_counter(), time.process_time()
        bot.step(state)
        rates.append((args.openspiel_sims / (time.perf_counter() - start),
                      args.openspiel_sims / (time.process_time() - cpu)))
    print(f"OpenSpiel MCTSBot (Python search, same network, batch 1): "
          f"{statistics.median(r[0] for r in rates):.0f} sims/s wall, {statistics.median(r[1] for r in rates):.0f} "
          f"per CPU s")
    figures.append(dict(benchmark="go", row=peer, metric=metric, unit="", values=[r[column] for r in rates],
                        better="higher"))
    report.publish(figures, args)


def bench_selfplay(args) -> None:
    import rlpytorch  # the shipped go9 says method: alphazero

    config = rlpytorch.config("go9", num_frames=args.num_frames, save_dir=args.save_dir, log_every=args.log_every)
    if args.extra:  # the settings after --, read as rlpytorch.train's command line reads them, over the rest
        settings = rlpytorch.training.arguments(config.method).parse(args.extra, defaults=dataclasses.asdict(config))
        config = dataclasses.replace(config, **settings)
    rlpytorch.train(config, ["python", *sys.argv])  # run.yaml names this command
    print(f"curve: {args.save_dir}/progress.csv (python -m rlpytorch.plot {args.save_dir} --y loss)")


def bench_gnugo(args) -> None:
    evaluator = load_evaluator(args.load) if args.load else play.uniform_evaluator
    wins, played = {"b": 0, "w": 0}, {"b": 0, "w": 0}
    records = set()  # each game's moves: how many of the games differ
    for game_index in range(args.first_game, args.first_game + args.games):
        ours = "b" if game_index % 2 == 0 else "w"
        engine = GtpEngine(evaluator, args.playouts, 9, play.KOMI, args.leaves, resign_threshold=args.resign_threshold,
                           pass_only_when_done=args.pass_only_when_done, sampled_moves=args.sampled_moves,
                           seed=1000 * game_index, reuse_tree=args.reuse_tree)
        with engine, GnuGo(args.level, 9, play.KOMI, seed=game_index) as gnugo:
            game = play_game(engine, gnugo, ours)
        records.add(tuple(engine.moves))
        wins[ours] += game.winner == ours
        played[ours] += 1
        print(f"game {game_index}: we play {ours}, {game.moves} moves, "
              f"{'resign by ' + game.resigned if game.resigned else game.score} (GNU Go says {game.gnugo_score})",
              flush=True)
    print(f"won {sum(wins.values())} of {args.games} against GNU Go level {args.level} at {args.playouts} playouts "
          f"({wins['b']} of {played['b']} as black, {wins['w']} of {played['w']} as white); "
          f"{len(records)} distinct games")


def bench_mctsbot(args) -> None:
    import pyspiel
    from open_spiel.python.algorithms import mcts

    evaluator = load_evaluator(args.load) if args.load else play.uniform_evaluator
    game = pyspiel.load_game("go", {"board_size": 9, "komi": play.KOMI})
    results = {"won": 0, "drawn": 0, "lost": 0}
    start = time.perf_counter()
    for game_index in range(args.first_game, args.first_game + args.games):
        rng = np.random.RandomState(game_index)
        bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=args.bot_sims,
                           evaluator=mcts.RandomRolloutEvaluator(1, rng), solve=True, random_state=rng)
        ours = 0 if game_index % 2 == 0 else 1
        state, moves = game.new_initial_state(), []
        while not state.is_terminal():
            color = "b" if state.current_player() == 0 else "w"
            if state.current_player() == ours:
                action = play.search(evaluator, 9, play.KOMI, moves, color, args.playouts,
                                     pass_only_when_done=args.pass_only_when_done).action
                os_action = to_openspiel(action, 9)
            else:
                os_action = bot.step(state)
                action = to_openspiel(os_action, 9)
            moves.append((color, play.vertex(action, 9)))
            state.apply_action(os_action)
        outcome = "won" if state.returns()[ours] > 0 else "lost" if state.returns()[ours] < 0 else "drawn"
        results[outcome] += 1
        # OpenSpiel ends a game in a draw when a stone recreates an earlier
        # position (our rules forbid that move); the score is then the one before it.
        score = play.observe(9, play.KOMI, moves if outcome != "drawn" else moves[:-1]).score
        print(f"game {game_index}: we play {'bw'[ours]}, {outcome} in {len(moves)} moves "
              f"(black - white - komi {score:+g}{', by a repetition' if outcome == 'drawn' else ''}), "
              f"so far {results}, {time.perf_counter() - start:.0f} s", flush=True)
    print(f"won {results['won']}, drew {results['drawn']}, lost {results['lost']} of {args.games} against MCTSBot "
          f"({args.bot_sims} random-rollout simulations; {args.playouts} playouts a move for the network)")


def bench_versus(args) -> None:
    """The network (--load) against the same search with no network (equal
    priors, value 0), colours alternating, each move a fresh search."""
    evaluators = {"net": load_evaluator(args.load), "none": play.uniform_evaluator}
    wins = 0
    for game_index in range(args.first_game, args.first_game + args.games):
        ours = "b" if game_index % 2 == 0 else "w"
        moves: list[play.Move] = []
        color, passes = "b", 0
        while passes < 2 and len(moves) < 2 * 81:
            evaluator = evaluators["net" if color == ours else "none"]
            action = play.search(evaluator, 9, play.KOMI, moves, color, args.playouts,
                                 pass_only_when_done=args.pass_only_when_done).action
            moves.append((color, play.vertex(action, 9)))
            passes = passes + 1 if action == 81 else 0
            color = "w" if color == "b" else "b"
        score = play.observe(9, play.KOMI, moves).score
        won = (score > 0) == (ours == "b")
        wins += won
        print(f"game {game_index}: network plays {ours}, {len(moves)} moves, black - white - komi = {score:+g}, "
              f"{'won' if won else 'lost'}", flush=True)
    print(f"network won {wins} of {args.games} against the search without a network ({args.playouts} playouts each)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("playouts")
    p.add_argument("--repeats", type=int, default=5)
    report.add_options(p)
    p = sub.add_parser("rules")
    p.add_argument("--games", type=int, default=2000)
    p.add_argument("--board_size", type=int, default=play.BOARD_SIZE)
    p.add_argument("--seed", type=int, default=0)
    report.add_options(p)
    p = sub.add_parser("sims")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--shapes", type=lambda t: tuple(int(x) for x in t.split("x")), nargs="+",
                   default=[(1, 8), (4, 8), (16, 8), (32, 8)], help="GAMESxLEAVES")
    p.add_argument("--frames", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--channels", type=int, default=32)
    p.add_argument("--blocks", type=int, default=3)
    p.add_argument("--openspiel_sims", type=int, default=200)
    p.add_argument("--device", default="cpu", help="where the network runs: cpu, cuda")
    report.add_options(p)
    p = sub.add_parser("selfplay")
    p.add_argument("--num_frames", type=int, default=200000)
    p.add_argument("--log_every", type=int, default=20)
    p.add_argument("--save_dir", default="runs/go9_bench", help="the run's folder (rlpytorch.run.run_dir)")
    p.add_argument("extra", nargs="*", help="more rlpytorch.train arguments (after --)")
    for name in ("gnugo", "mctsbot", "versus"):
        p = sub.add_parser(name)
        p.add_argument("--load", default="")
        p.add_argument("--games", type=int, default=10)
        p.add_argument("--playouts", type=int, default=200)
        p.add_argument("--resign_threshold", type=float, default=play.RESIGN_THRESHOLD)
        p.add_argument("--level", type=int, default=1)
        p.add_argument("--bot_sims", type=int, default=1000)
        p.add_argument("--first_game", type=int, default=0, help="index of the first game (its seed and colours)")
        p.add_argument("--pass_only_when_done", action=argparse.BooleanOptionalAction,
                       default=play.PASS_ONLY_WHEN_DONE,
                       help="the network's side passes only when every other move fills its own eye "
                            "(as in go9.yaml's self-play)")
    sub.choices["gnugo"].add_argument(
        "--sampled_moves", type=int, default=0,
        help="the first N moves of a game (both colours counted) are drawn by the search's visits, seeded by the "
             "game's index, so that games differ; GNU Go's own seed alone changes few of its moves")
    sub.choices["gnugo"].add_argument(
        "--leaves", type=int, default=play.LEAVES,
        help="leaves evaluated together per search step: more is faster per playout, a little weaker "
             "(virtual loss)")
    sub.choices["gnugo"].add_argument(
        "--reuse_tree", action=argparse.BooleanOptionalAction, default=play.REUSE_TREE,
        help="the network's search keeps its subtree of the moves played, both sides', from move to move "
             "(elfpy.gtp's default); --no-reuse_tree: a fresh search each move, as in the matches before it")
    args = parser.parse_args()
    if args.command == "gnugo" and args.leaves < 1:
        parser.error(f"--leaves must be >= 1, got {args.leaves}")
    {"playouts": bench_playouts, "rules": bench_rules, "sims": bench_sims, "selfplay": bench_selfplay,
     "gnugo": bench_gnugo, "mctsbot": bench_mctsbot,
     "versus": bench_versus}[args.command](args)


if __name__ == "__main__":
    main()
