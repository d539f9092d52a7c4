"""Episode statistics and the three log outputs."""

import csv
import math

from rlpytorch.core.stats import EpisodeStats, RunningMean, StatsLogger, cut_history, format_record, history_mark


def test_episode_stats_summarize_the_last_window():
    stats = EpisodeStats(window=3)
    stats.add([1.0, 2.0], [10, 20])
    stats.add([3.0, 4.0], [30, 40], statistics={"won": [1, 0]})
    summary = stats.summary()
    assert summary["episodes"] == 4
    assert summary["return_mean"] == 3.0  # 2, 3, 4
    assert (summary["return_min"], summary["return_max"], summary["length_mean"]) == (2.0, 4.0, 30.0)
    assert summary["won_mean"] == 0.5


def test_episode_stats_are_nan_before_any_episode():
    assert math.isnan(EpisodeStats().mean_return)
    assert "won_mean" not in EpisodeStats().summary()  # no game statistic seen


def test_mean_return_follows_every_added_episode():
    stats = EpisodeStats(window=2)
    assert math.isnan(stats.mean_return)
    stats.add([1.0], [1])
    assert stats.mean_return == 1.0
    stats.add([3.0], [1])
    assert stats.mean_return == 2.0
    stats.add([5.0], [1])  # the window drops the first
    assert stats.mean_return == 4.0


def test_running_mean_averages_between_pops():
    mean = RunningMean()
    mean.add({"loss": 1.0})
    mean.add({"loss": 3.0})
    assert mean.pop() == {"loss": 2.0}
    assert mean.pop() == {}


def test_running_mean_averages_each_value_over_the_calls_that_gave_it():
    """TD3 gives its actor loss every second update: the mean is theirs, not half of it;
    a resumed run keeps the counts."""
    mean = RunningMean()
    mean.add({"critic_loss": 1.0, "actor_loss": -4.0})
    mean.add({"critic_loss": 3.0})
    resumed = RunningMean()
    resumed.load_state_dict(mean.state_dict())
    assert resumed.pop() == mean.pop() == {"critic_loss": 2.0, "actor_loss": -4.0}
    old_checkpoint = RunningMean()
    old_checkpoint.load_state_dict({"sums": {"loss": 6.0}, "count": 3})
    assert old_checkpoint.pop() == {"loss": 2.0}


def test_format_record_is_one_readable_line():
    line = format_record({"frames": 12345.0, "fps": 999.4, "return_mean": 20.0, "return_std": 1.5})
    assert line == "F 12,345  R 20.0±1.5  FPS 999"


def test_logger_writes_stdout_text_log_csv_and_tensorboard(tmp_path, capsys):
    logger = StatsLogger(log_dir=str(tmp_path), tensorboard=True)
    logger.log({"frames": 100.0, "return_mean": 5.0})
    logger.log({"frames": 200.0, "return_mean": 6.0, "loss": 0.5})  # a new column appears
    logger.note("done")
    logger.close()
    lines = ["F 100  R 5", "F 200  R 6  loss 0.5", "done"]
    assert capsys.readouterr().out.splitlines() == lines
    assert (tmp_path / "log.txt").read_text().splitlines() == lines
    with open(tmp_path / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows == [
        {"frames": "100.0", "return_mean": "5.0", "loss": ""},
        {"frames": "200.0", "return_mean": "6.0", "loss": "0.5"},
    ]
    assert list(tmp_path.glob("events.out.tfevents.*"))


def test_the_history_is_cut_back_to_a_checkpoint_and_kept_whole_when_nothing_is_past_it(tmp_path):
    logger = StatsLogger(log_dir=tmp_path, tensorboard=False, echo=False)
    logger.log({"frames": 100.0})
    logger.log({"frames": 200.0})
    mark = history_mark(tmp_path)  # a checkpoint at 200 frames
    logger.log({"frames": 300.0})
    logger.note("a note of the killed try")
    before = (tmp_path / "log.txt").read_bytes()
    cut_history(tmp_path, 300, mark)  # nothing past 300: all stays
    assert (tmp_path / "log.txt").read_bytes() == before
    cut_history(tmp_path, 200, mark)
    assert (tmp_path / "progress.csv").read_text() == "frames\n100.0\n200.0\n"
    assert (tmp_path / "log.txt").read_bytes() == before[:mark] and before[:mark].decode().endswith("F 200\n")
