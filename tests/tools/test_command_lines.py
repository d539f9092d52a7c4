"""The command lines' own words: each entry point's ``--help`` and errors name it as it is
typed (``python -m ...``, not ``train.py``), help shows the defaults, an error names only
what is wrong."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from elfpy import gtp
from elfpy.render import minirts
from rlpytorch import evaluate, plot, training, tune

ENTRY_POINTS = {
    "elfpy.gtp": gtp.main,
    "elfpy.render.minirts": minirts.main,
    "rlpytorch.train": training.main,
    "rlpytorch.evaluate": evaluate.main,
    "rlpytorch.plot": plot.main,
    "rlpytorch.tune": tune.main,
}  # (rlpytorch.launch: tests/tools/test_launch.py; AlphaZero: rlpytorch.train --method alphazero)


def help_of(main, capsys, argv=("--help",)) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    assert exit_.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_help_names_the_program_as_it_is_typed(module, capsys):
    assert help_of(ENTRY_POINTS[module], capsys).startswith(f"usage: python -m {module} ")


@pytest.mark.parametrize("module, argv", [("rlpytorch.train", ["--resume"]), ("rlpytorch.evaluate", ["--load"]),
                                          ("rlpytorch.train", ["--method", "alphazero", "--resume"])])
def test_an_option_without_its_value_is_reported_under_the_programs_name(module, argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        ENTRY_POINTS[module](argv)
    assert exit_.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == f"python -m {module}: error: argument {argv[-1]}: expected one argument"


@pytest.mark.parametrize("module, defaults", [
    ("elfpy.gtp", ["simulations per genmove (default: 100)", "(default: 7.5)", "(-1: never) (default: -1.0)"]),
    ("rlpytorch.plot", ["(default: curves.png)", "(default: frames)", "(default: return_mean)", "(default: std)"]),
])
def test_help_shows_the_defaults(module, defaults, capsys):
    text = " ".join(help_of(ENTRY_POINTS[module], capsys).split())  # (argparse wraps the lines)
    for default in defaults:
        assert default in text


def test_train_help_says_each_method_lists_its_own_settings(capsys):
    text = " ".join(help_of(training.main, capsys).split())
    assert "python -m rlpytorch.train --method ppo --help" in text
    assert "--clip_eps" not in text and "--clip_eps" in help_of(training.main, capsys, ["--method", "ppo", "--help"])


def test_alphazero_help_keeps_its_command_lines_and_shows_no_empty_default(capsys):
    text = help_of(training.main, capsys, ["--method", "alphazero", "--help"])
    assert "\n    import rlpytorch\n" in text  # the docstring's example, not run into the prose around it
    assert "\n    python -m rlpytorch.train --method ppo --help\n" in text  # nor the epilog's command line
    assert "(``--method alphazero --config go9``)" in " ".join(text.split())  # how to run AlphaZero on Go
    assert "(default: )" not in text and "(default: 200000)" in text


def test_train_with_method_alphazero_lists_alphazeros_settings():
    done = subprocess.run([sys.executable, "-m", "rlpytorch.train", "--method", "alphazero", "--help"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("usage: python -m rlpytorch.train ")
    for group in ("SelfPlayScript:", "AlphaZero:", "SelfPlayKeys:", "PolicyValueLoss:", "PolicyValueSettings:"):
        assert f"\n{group}\n" in text, group
    for option in ("--visits_key", "--sgd_batch", "--game_writer", "--channels", "--value_coef", "--resume"):
        assert option in text, option
    assert "--clip_eps" not in text and "The settings above are those of --method alphazero" in text


def write_progress(folder: Path, columns: list[str]) -> Path:
    folder.mkdir(parents=True)
    with open(folder / "progress.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerow([1.0] * len(columns))
    return folder


@pytest.mark.parametrize("columns, named", [(["frames", "loss"], "no column 'return_mean';"),
                                            (["loss"], "no columns 'frames' and 'return_mean';")])
def test_plot_names_only_the_missing_columns_in_one_line(tmp_path, capsys, columns, named):
    run = write_progress(tmp_path / "run", columns)
    with pytest.raises(SystemExit) as exit_:
        plot.main([str(run), "--out", str(tmp_path / "curves.png")])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith("python -m rlpytorch.plot: error: ") and named in error
    assert error.endswith(f"columns: {sorted(columns)}")
