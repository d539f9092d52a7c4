"""What a training shows on stdout: one line on where it writes (not its
configuration, unless ``--verbose``), stats lines within ``SCREEN_WIDTH``
columns (whole in log.txt, every value in progress.csv), and, stopped by a
signal, the frame, the checkpoint and the command that goes on."""

from __future__ import annotations

import csv
import signal
from types import SimpleNamespace

from test_run_lifecycle import start_training  # noqa: F401 (a fixture)

import rlpytorch
from rlpytorch import training
from rlpytorch.core.stats import _SHORT, SCREEN_WIDTH, StatsLogger, fit_screen, format_record
from rlpytorch.models.base import read_checkpoint
from rlpytorch.run.screen import end_lines

SMALL = dict(game="cartpole", num_games=8, actor_batch=8, train_batch=8, num_threads=1, progress=False,
             tensorboard=False, num_frames=400, log_every=200, eval_episodes=2)
# A record with every quantity a stats line knows, and a game's statistic (won): far wider than the screen.
EVERYTHING = {**{key: 123456.789 for key in _SHORT}, "return_std": 12.5, "won_mean": 0.25}


def test_a_training_prints_where_it_writes_and_not_its_configuration(tmp_path, capsys):
    run = rlpytorch.train(rlpytorch.config(save_dir=str(tmp_path / "run"), **SMALL))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"run folder: {run.folder} (configuration in config.yaml; --verbose prints it)"
    assert (run.folder / "config.yaml").is_file() and "effective configuration:" not in lines
    assert all(len(line) <= SCREEN_WIDTH for line in lines if line.startswith("F ")), lines
    assert [line.split("  ")[0] for line in lines[1:3]] == ["F 200", "F 400"]
    assert lines[3].startswith("trained 400 frames in ") and lines[4].startswith("greedy evaluation: ")


def test_verbose_prints_the_configuration_and_a_run_without_a_folder_says_nothing_is_written(capsys):
    rlpytorch.train(rlpytorch.config(save_dir="", verbose=True, **SMALL))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "effective configuration:" and "verbose               = True" in lines
    assert "no run folder (--save_dir is empty): nothing is written" in lines


def test_a_stats_line_fits_the_screen_and_log_txt_and_progress_csv_keep_every_quantity(tmp_path, capsys):
    logger = StatsLogger(log_dir=tmp_path, tensorboard=False)
    logger.log(EVERYTHING)
    shown = capsys.readouterr().out.splitlines()
    whole = format_record(EVERYTHING)
    assert len(whole) > SCREEN_WIDTH and shown == [fit_screen(whole)]
    assert len(shown[0]) <= SCREEN_WIDTH and shown[0].endswith(" …") and whole.startswith(shown[0][:-2])
    assert shown[0].startswith("F 123,457  R 123456.8±12.5  won 0.25  eval R 1.23e+05  len 1.23e+05  FPS 123,457  t ")
    assert (tmp_path / "log.txt").read_text().splitlines() == [whole]
    assert all(f"{short} " in whole for short in _SHORT.values()) and "won " in whole
    with open(tmp_path / "progress.csv") as file:
        assert {key: float(value) for key, value in next(csv.DictReader(file)).items()} == EVERYTHING


def test_a_line_that_fits_is_shown_whole_and_one_field_too_wide_is_cut_to_the_width():
    assert fit_screen("F 1  R 2", width=8) == "F 1  R 2"
    assert fit_screen("F 1  R 2", width=7) == "F 1 …"
    assert fit_screen("x" * 20, width=10) == "x" * 9 + "…"


def test_a_run_stopped_from_python_says_the_python_call_that_goes_on(tmp_path):
    summary = SimpleNamespace(frames=1200, seconds=2.0, fps=600.0, interrupted=True)
    (tmp_path / "last.pt").touch()
    assert end_lines(summary, tmp_path, None) == [
        "stopped by a signal at frame 1,200: trained 1,200 frames in 2.0s (600 FPS)",
        f"saved {tmp_path / 'last.pt'} (weights and training state at frame 1,200)",
        f"to go on: rlpytorch.train(rlpytorch.config(resume={str(tmp_path)!r}))"]
    assert end_lines(summary, None, training.PROG)[1] == "nothing was saved (no run folder)"


def test_ctrl_c_ends_a_training_saying_it_stopped_at_which_frame_what_it_saved_and_the_resume_command(
        tmp_path, start_training):  # noqa: F811 (the fixture)
    process = start_training("--save_every", "0", "--no-tensorboard")
    first = [process.stdout.readline() for _ in range(2)]  # the run's folder, then the first stats line
    assert first[1].startswith("F "), first
    process.send_signal(signal.SIGINT)
    rest, stderr = process.communicate()
    run = tmp_path / "run"
    lines = [*(line.rstrip("\n") for line in first), *rest.splitlines()]
    assert process.returncode == training.INTERRUPTED and "Traceback" not in stderr, stderr
    frames = read_checkpoint(run / "last.pt")["resume"]["trainer"]["frames"]
    assert frames > 0 and lines[-3].startswith(f"stopped by a signal at frame {frames:,}: trained ")
    assert lines[-2:] == [f"saved {run / 'last.pt'} (weights and training state at frame {frames:,})",
                          f"to go on: {training.PROG} --resume {run}"]
    assert not any(line.startswith("trained ") for line in lines)  # not a finished run's last line
    assert lines[0] == f"run folder: {run} (configuration in config.yaml; --verbose prints it)"
    assert all(len(line) <= SCREEN_WIDTH for line in lines if line.startswith("F ")), lines
