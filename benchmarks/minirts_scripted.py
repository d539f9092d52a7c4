#!/usr/bin/env python
"""Win rate of a scripted command policy against a built-in MiniRTS AI.

A feasibility check for learning: before training an agent on the nine
strategic commands, see whether some simple fixed rule over the same
commands and the same observation (the scalars `v`) can win at all, and
how that depends on `frame_skip` (the agent gives one command per step; the
built-in AI up to five per decision, every 25 ticks).

The rule, one command per step: a worker while it has fewer than `--workers`
and 50 resources; a barracks when it has none and 150; a melee unit when it
has a barracks and 100; else attack with `--attack_at` troops or more, else
defend. Each of `--games` games counts its first episode only (counting the
first episodes to finish would favour short games).

    python benchmarks/minirts_scripted.py --frame_skip 25 10
"""

from __future__ import annotations

import argparse

import numpy as np

import elfpy

BUILD_WORKER, BUILD_BARRACKS, BUILD_MELEE, ATTACK, DEFEND = 1, 2, 3, 6, 8
# Entries of `v` (cpp/games/rts/features.h): resources / 100, own counts / 10.
RESOURCES, WORKERS, MELEE, RANGED, BARRACKS = 0, 1, 2, 3, 5


def scripted_commands(v: np.ndarray, workers: int, attack_at: int) -> np.ndarray:
    """One command per row of the scalars ``v`` [B, 14]."""
    resources = v[:, RESOURCES] * 100
    counts = np.rint(v * 10).astype(int)
    troops = counts[:, MELEE] + counts[:, RANGED]
    rules = [
        (counts[:, WORKERS] < workers) & (resources >= 50),
        (counts[:, BARRACKS] == 0) & (resources >= 150),
        (counts[:, BARRACKS] > 0) & (resources >= 100),
        troops >= attack_at,
    ]
    return np.select(rules, [BUILD_WORKER, BUILD_BARRACKS, BUILD_MELEE, ATTACK], DEFEND)


def win_rate(games: int, frame_skip: int, opponent: str, workers: int, attack_at: int, seed: int) -> float:
    """Share of won first episodes of ``games`` games."""
    gc = elfpy.GameContext("minirts", num_games=games, num_threads=1, seed=seed,
                           frame_skip=frame_skip, opponent=opponent)
    gc.add_tag("actor", batch_size=min(games, 64), inputs=["v", "terminal", "won"], replies=["a"])
    first: dict[int, int] = {}

    def act(batch: elfpy.Batch) -> dict[str, np.ndarray]:
        for row in np.flatnonzero(batch["terminal"]):
            first.setdefault(int(batch.game_ids[row]), int(batch["won"][row]))
        return {"a": scripted_commands(batch["v"], workers, attack_at)}

    gc.reg_callback("actor", act)
    with gc:
        while len(first) < games:
            gc.run()
    return float(np.mean(list(first.values())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frame_skip", type=int, nargs="+", default=[25, 10])
    parser.add_argument("--attack_at", type=int, nargs="+", default=[4, 5, 6])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--opponent", default="simple")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("| frame_skip | attack with | win rate |\n|---|---|---|")
    for frame_skip in args.frame_skip:
        for attack_at in args.attack_at:
            rate = win_rate(args.games, frame_skip, args.opponent, args.workers, attack_at, args.seed)
            print(f"| {frame_skip} | {attack_at} troops | {rate:.1%} |", flush=True)


if __name__ == "__main__":
    main()
