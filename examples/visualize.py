"""Turn a MiniRTS game into an animated GIF: from a replay file, or played live.

    # built-in AI against built-in AI (seats=0), one frame every 10 ticks
    python examples/visualize.py --out game.gif --ai0 hit_and_run --opponent simple --frame_skip 10
    # random commands (seat 0) against the simple AI, in capture the flag; keep the replay
    python examples/visualize.py --policy random --variant ctf --out ctf.gif --save_replay ctf.json
    # a saved replay (re-simulated and checked board by board)
    python examples/visualize.py --replay ctf.json --out ctf.gif
    # a trained model (greedy) against the checkpoint's opponent
    python examples/visualize.py --load pretrained/minirts_simple_ac.pt --out model.gif

A live game's options come from the flags (``--variant``, ``--map_size``,
``--opponent``, ``--ai0``, ``--frame_skip``, ``--game_options k=v,...``); with
``--load`` they come from the checkpoint's ``--game_options`` (the flags then
override them). ``--fog`` draws seat 0's view (fog of war) instead of the
whole map. ``--ascii`` also prints the final board.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from elfpy.render import minirts as render
from rlpytorch.core.game_loader import parse_options


def model_policy(path: str) -> tuple[render.Policy, dict[str, Any], tuple[str, ...]]:
    """A greedy policy from an rlpytorch checkpoint (or a run folder's last one),
    the game options it was trained with, and the observation keys it reads."""
    import torch

    from rlpytorch.acting.act import to_tensors
    from rlpytorch.evaluate import load_trained

    model, loader = load_trained(path)
    model.eval()
    device = torch.device("cpu")

    def policy(batch: Any) -> np.ndarray:
        with torch.inference_mode():
            out = model(to_tensors(batch, model.obs_keys, device))
        return out["pi"].argmax(-1).cpu().numpy()

    return policy, dict(loader.options), tuple(model.obs_keys)


def trained_game(path: str) -> str | None:
    """The game an rlpytorch checkpoint (or a run folder's last one) was trained on, read without rebuilding it."""
    from rlpytorch.models.base import read_checkpoint
    from rlpytorch.run.run_dir import checkpoint_path

    return read_checkpoint(checkpoint_path(path))["args"].get("game")


def main(argv: Sequence[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--replay", default="", help="replay file to draw (from --save_replay or elfpy.render.minirts)")
    source.add_argument("--policy", choices=("ai", "random"), default="ai",
                        help="live game: built-in AIs on both sides (ai), or random commands on seat 0")
    source.add_argument("--load", default="",
                        help="live game: an rlpytorch checkpoint (or run folder) plays seat 0, greedily")
    parser.add_argument("--out", default="minirts.gif", help="GIF to write")
    parser.add_argument("--save_replay", default="", help="live game: also save its replay here")
    parser.add_argument("--variant", default=None, help="standard, ctf or tower_defense")
    parser.add_argument("--map_size", type=int, default=None)
    parser.add_argument("--opponent", default=None, help="built-in AI of player 1 (simple, hit_and_run)")
    parser.add_argument("--ai0", default=None, help="built-in AI of player 0 with --policy ai")
    parser.add_argument("--frame_skip", type=int, default=None, help="ticks per step, so per frame")
    parser.add_argument("--game_options", default="", help="more game options, k=v,k=v")
    parser.add_argument("--seed", type=int, default=0, help="seed of the live game's context")
    parser.add_argument("--max_steps", type=int, default=2000, help="stop a live game after this many steps")
    parser.add_argument("--fog", action="store_true", help="draw seat 0's view instead of the whole map")
    parser.add_argument("--scale", type=int, default=12, help="pixels per tile")
    parser.add_argument("--duration", type=int, default=100, help="milliseconds per frame")
    parser.add_argument("--ascii", action="store_true", help="print the final board as text")
    args = parser.parse_args(argv)

    if args.replay:
        replay = render.Replay.load(args.replay)
        episode = render.verify(replay)
        label = f"replay {Path(args.replay).name}"
    else:
        options: dict[str, Any] = {}
        policy = None
        inputs: tuple[str, ...] = ()
        if args.load:
            if (game := trained_game(args.load)) != "minirts":  # refused before that game is built
                parser.error(f"--load {args.load}: trained on {game!r}, not minirts")
            policy, options, inputs = model_policy(args.load)
            options["seats"] = 1
            label = f"model {Path(args.load).name}"
        elif args.policy == "random":
            options["seats"] = 1
            label = "random vs AI"
        else:
            options["seats"] = 0
            label = "AI vs AI"
        for key, value in (("variant", args.variant), ("map_size", args.map_size), ("opponent", args.opponent),
                           ("ai0", args.ai0), ("frame_skip", args.frame_skip)):
            if value is not None:
                options[key] = value
        options.update(parse_options(args.game_options))
        if args.fog:
            options["board_fog"] = True
            if options["seats"] == 0:
                raise SystemExit("--fog needs a seat to see through: use --policy random or --load")
        else:
            options["board_fog"] = False
        if args.policy == "random" and not args.load:
            import elfpy

            spec = elfpy.GameContext("minirts", num_games=1, num_threads=1, **options).spec()
            policy = render.random_policy(int(spec["a"].bounds[1]) + 1, seed=args.seed)
        episode = render.play(options, policy, seed=args.seed, max_steps=args.max_steps, inputs=inputs)
        if args.save_replay:
            print("wrote", episode.replay.save(args.save_replay))
    replay = episode.replay
    variant = replay.options.get("variant", "standard")
    outcome = "won" if replay.won and replay.won[0] else ("lost" if replay.rewards and replay.rewards[0] < 0 else "")
    captions = [f"{variant} {label}  tick {t}" for t in episode.ticks]
    captions[-1] += f"  end: player 0 {outcome}" if outcome else "  end"
    out = render.save_gif(episode.boards, args.out, scale=args.scale, duration_ms=args.duration, captions=captions)
    print(f"wrote {out}: {len(episode.boards)} frames, {episode.ticks[-1]} ticks, episode seed {replay.episode_seed}")
    if args.ascii:
        print(render.board_to_ascii(episode.boards[-1]))
    return out


if __name__ == "__main__":
    main()
