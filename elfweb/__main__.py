"""Watch and play in the browser: ``python -m elfweb [--load FILE ...]`` serves a local page and prints its URL.

    python -m elfweb                                       # MiniRTS by built-in AIs, Go against the search
    python -m elfweb --load runs/<time>                    # a run's last checkpoint plays its game
                                                           # (MiniRTS: and you play it with the mouse)
    python -m elfweb --load pretrained/go9_selfplay_64min.pt2 --playouts 200   # Go against a network
    python -m elfweb --game gym:CartPole-v1                # a hosted game, played at random

The page can open only the entries made from these arguments; it listens on
127.0.0.1 unless --host says otherwise, and always wants the token in the
printed URL. Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import secrets
import socket
from collections.abc import Sequence

from elfweb.catalog import builtin_entries, catalog, loaded_entry, play_entry
from elfweb.server import Limits, Server

DEFAULT_PLAYOUTS = 64  # a move in well under a second on one core with the 9x9 network


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m elfweb", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", action="append", default=[],
                        help="checkpoint, run folder (its last checkpoint) or Go network (.pt2); repeatable")
    parser.add_argument("--game", action="append", default=[],
                        help="another game to watch played at random, e.g. gym:CartPole-v1; repeatable")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="port (0: any free one; default: %(default)s)")
    parser.add_argument("--playouts", type=int, default=DEFAULT_PLAYOUTS,
                        help="search simulations per Go move of the opponent (default: %(default)s)")
    parser.add_argument("--max_viewers", type=int, default=Limits.viewers, help="default: %(default)s")
    parser.add_argument("--max_games", type=int, default=Limits.games, help="games open at once (default: %(default)s)")
    args = parser.parse_args(argv)
    for name in ("playouts", "max_viewers", "max_games"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    try:
        entries = catalog([*builtin_entries(args.playouts, args.game),
                           *(loaded_entry(path, args.playouts) for path in args.load),
                           *filter(None, (play_entry(path) for path in args.load))])
    except (OSError, ValueError) as error:  # a missing or refused file, a game that cannot draw itself
        parser.error(str(error))
    import torch

    torch.set_num_threads(1)  # one core for the models of every viewer: the games' engines use the others
    serve(Server(entries, secrets.token_urlsafe(16), Limits(args.max_viewers, args.max_games)), args.host, args.port)


def serve(server: Server, host: str, port: int) -> None:
    """Runs ``server`` on ``host:port`` until Ctrl-C; prints the URL (with the port the system gave for 0)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # from now on a browser's connection waits in the backlog until uvicorn serves it
    shown = f"[{host}]" if ":" in host else host
    print(f"elfweb: open http://{shown}:{sock.getsockname()[1]}/?token={server.token}", flush=True)
    config = uvicorn.Config(server.app(), log_level="warning", ws_max_size=1 << 16)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn shuts down on Ctrl-C, then raises it again: the stop asked for
        pass
    print("elfweb: stopped", flush=True)


if __name__ == "__main__":
    main()
