"""One default per setting: the Python tools around the Go and MiniRTS games
take komi, board size, the resign threshold and the map size from the games'
own option declarations (``GameContext.game_options``), never from a number
of their own."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
from pathlib import Path

import numpy as np
import pytest

import elfpy
from elfpy.game_defaults import option_default
from elfpy.go import gnugo, openspiel, play, sgf
from elfpy.gtp import GtpEngine, serve
from elfpy.gtp import main as gtp_main
from elfpy.render import minirts as render

ROOT = Path(__file__).resolve().parents[2]
GO_KOMI = float(option_default("go", "komi"))
GO_SIZE = int(option_default("go", "board_size"))
RESIGN_THRESHOLD = float(option_default("go_mcts", "resign_threshold"))


def declared(game: str) -> dict[str, str]:
    return {name: default for name, default, _ in elfpy.GameContext.game_options(game)}


def defaults(function) -> dict[str, object]:
    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty}


def test_option_default_is_the_games_declared_default():
    for game in ("go", "go_mcts", "minirts"):
        assert {name: option_default(game, name) for name in declared(game)} == declared(game)
    with pytest.raises(ValueError, match="game 'go' has no option 'handicap'"):
        option_default("go", "handicap")


def test_go_tools_default_to_the_games_komi_size_and_search_settings():
    assert (play.KOMI, play.BOARD_SIZE) == (GO_KOMI, GO_SIZE)
    assert play.RESIGN_THRESHOLD == RESIGN_THRESHOLD
    assert (play.PLAYOUTS, play.LEAVES) == (int(option_default("go_mcts", "playouts")),
                                            int(option_default("go_mcts", "leaves")))
    assert defaults(GtpEngine)["komi"] == GO_KOMI and defaults(GtpEngine)["board_size"] == GO_SIZE
    assert defaults(GtpEngine)["resign_threshold"] == RESIGN_THRESHOLD
    assert defaults(play.search)["resign_threshold"] == RESIGN_THRESHOLD
    assert (defaults(gnugo.GnuGo)["komi"], defaults(gnugo.GnuGo)["size"]) == (GO_KOMI, GO_SIZE)
    assert defaults(openspiel.compare_random_games)["komi"] == GO_KOMI
    assert (defaults(sgf.SgfWriter)["komi"], defaults(sgf.SgfWriter)["board_size"]) == (GO_KOMI, GO_SIZE)


def test_gtp_command_line_states_the_games_defaults():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        gtp_main(["--help"])
    text = " ".join(out.getvalue().split())
    assert f"komi (default: {GO_KOMI})" in text
    assert f"board side (default: {GO_SIZE})" in text
    assert f"(-1: never) (default: {RESIGN_THRESHOLD})" in text


def test_gtp_and_sgf_count_the_games_komi(tmp_path):
    out = io.StringIO()
    serve(GtpEngine(), io.StringIO("final_score\nshowboard\n"), out)
    assert out.getvalue().startswith(f"= W+{GO_KOMI:g}\n")  # an empty board: white wins by komi
    assert f"komi {GO_KOMI:g}" in out.getvalue()
    path = sgf.SgfWriter(str(tmp_path))(1, [], [], 0.0)
    assert f"SZ[{GO_SIZE}]KM[{GO_KOMI:g}]" in path.read_text()


def hopeless_for_black(s: np.ndarray, legal: np.ndarray):
    """Equal priors; value -1 for black to move (plane 16 is ones then), +1 for white."""
    policy, _ = play.uniform_evaluator(s, legal)
    black_to_move = s[:, 16].reshape(len(s), -1).max(axis=1) > 0
    return policy, np.where(black_to_move, -1.0, 1.0).astype(np.float32)


def test_the_default_resign_threshold_never_resigns_and_a_set_one_does():
    # -1 is the lowest value a search can see, and the game resigns only strictly
    # below a threshold above -1: the default plays on even when all is lost.
    assert RESIGN_THRESHOLD == -1.0
    with GtpEngine(hopeless_for_black, playouts=16, leaves=4) as engine:
        answer = engine.handle("genmove b")[0]
    assert answer.startswith("= ") and answer != "= resign\n\n"
    with GtpEngine(hopeless_for_black, playouts=16, leaves=4, resign_threshold=-0.5) as resigning:
        assert resigning.handle("genmove b")[0] == "= resign\n\n"


def test_minirts_renderer_draws_the_games_default_map(capsys):
    render.main([])
    size = int(option_default("minirts", "map_size"))
    board_lines = capsys.readouterr().out.splitlines()[1:]  # after the title, the map in a frame
    assert len(board_lines) == size + 2 and board_lines[0] == "+" + "-" * size + "+"


SETTINGS = {"komi", "board_size", "size", "resign_threshold", "map_size", "variant"}
TOOLS = ["elfpy/gtp.py", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "elfpy/go").glob("*.py")),
         "elfpy/render/minirts.py", "benchmarks/bench_go.py"]


def literal(node: ast.expr) -> bool:
    """A number or text written out: ``7.5``, ``"standard"``, ``-1.0`` (a minus sign and a number)."""
    return isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant))


def restated_defaults(path: str) -> list[str]:
    """Where ``path`` gives one of SETTINGS a literal default: a parameter's
    default or an ``add_argument("--<setting>", default=...)``."""
    found = []
    for node in ast.walk(ast.parse((ROOT / path).read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args.posonlyargs + node.args.args
            named = [*zip(args[len(args) - len(node.args.defaults):], node.args.defaults, strict=True),
                     *((a, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True) if d)]
            found += [f"{path}:{d.lineno} {a.arg}" for a, d in named
                      if a.arg in SETTINGS and literal(d)]
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument" and node.args
                and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).lstrip("-") in SETTINGS):
            found += [f"{path}:{k.lineno} {node.args[0].value}" for k in node.keywords
                      if k.arg == "default" and literal(k.value)]
    return found


def test_no_tool_restates_a_games_default():
    assert [where for path in TOOLS for where in restated_defaults(path)] == []


def test_the_scan_finds_a_restated_default(tmp_path, monkeypatch):
    planted = tmp_path / "planted.py"
    planted.write_text("def f(komi=7.5, *, map_size=20, seed=0):\n    pass\n"
                       "parser.add_argument('--resign_threshold', type=float, default=-1.0)\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert restated_defaults("planted.py") == ["planted.py:1 komi", "planted.py:1 map_size",
                                              "planted.py:3 --resign_threshold"]
