"""A command whose optional part is not installed stops at one line naming the
extra to install (`pip install 'elf-platform[plot]'`, setup.py's EXTRAS).
Each case hides the package (None in sys.modules makes its import fail).
Ray and W&B: tests/tools/test_launch.py and tests/rlpytorch/test_tracking.py."""

from __future__ import annotations

import importlib
import sys

import pytest

import elfpy
import elfpy.video
from rlpytorch import plot, tune


def hide(monkeypatch, module: str) -> None:
    """`module` and its submodules (an earlier test may have imported them) cannot be imported."""
    for name in [name for name in sys.modules if name.startswith(module + ".")] + [module]:
        monkeypatch.setitem(sys.modules, name, None)


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


@pytest.mark.parametrize(("command", "module", "extra"), [
    (lambda tmp: plot.main([str(tmp)]), "matplotlib", "plot"),
    (lambda tmp: tune.main(["--space", "lr=loguniform:0.1:1", "--out", str(tmp)]), "optuna", "tune"),
    (lambda tmp: tune.main(["--space", "lr=loguniform:0.1:1", "--out", str(tmp)]), "matplotlib", "tune"),
], ids=["plot", "tune-optuna", "tune-matplotlib"])
def test_a_command_line_without_its_extra_exits_with_one_line_naming_it(command, module, extra, monkeypatch,
                                                                        tmp_path, capsys):
    hide(monkeypatch, module)
    with pytest.raises(SystemExit) as exited:
        command(tmp_path)
    assert exited.value.code != 0
    line = last_line(capsys.readouterr().err)
    assert module in line and line.endswith(f"pip install 'elf-platform[{extra}]'"), line


@pytest.mark.parametrize(("game", "module", "extra"), [
    ("gym:ALE/Pong-v5", "ale_py", "atari"),
    ("gym:MiniGrid-Empty-5x5-v0", "minigrid", "minigrid"),
    ("gym:MinAtar/Breakout-v1", "minatar.gym", "minatar"),
    ("envpool:Pong-v5", "envpool", "envpool"),
    ("pz:mpe2.simple_spread_v3", "mpe2", "pettingzoo"),
])
def test_a_game_whose_package_is_missing_is_refused_naming_the_extra(game, module, extra, monkeypatch):
    hide(monkeypatch, module)
    with pytest.raises(ValueError, match=rf"pip install 'elf-platform\[{extra}\]'$"):
        elfpy.GameContext(game, num_games=1, num_workers=1)


@pytest.mark.parametrize("module", ["imageio", "PIL"])
def test_videos_without_their_extra_are_refused_before_anything_plays(module, monkeypatch):
    hide(monkeypatch, module)
    with pytest.raises(ValueError, match=rf"videos need {module}: pip install 'elf-platform\[video\]'"):
        elfpy.video.check_drawable("minirts")


@pytest.mark.parametrize(("adapter", "module", "extra"), [
    ("elfpy.sb3", "stable_baselines3", "sb3"),
    ("elfpy.pettingzoo", "pettingzoo", "pettingzoo"),
])
def test_an_adapter_module_without_its_library_names_the_extra(adapter, module, extra, monkeypatch):
    hide(monkeypatch, module)
    monkeypatch.delitem(sys.modules, adapter, raising=False)
    with pytest.raises(ImportError, match=rf"pip install 'elf-platform\[{extra}\]'$"):
        importlib.import_module(adapter)

