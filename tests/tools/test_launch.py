"""rlpytorch.launch: the grid, the folders, resuming, failures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlpytorch import launch
from rlpytorch.models.base import read_checkpoint


def test_seeds_ranges_and_lists() -> None:
    assert launch.parse_seeds("0-3") == [0, 1, 2, 3]
    assert launch.parse_seeds("1,5,7-8") == [1, 5, 7, 8]
    with pytest.raises(ValueError, match="no seed"):
        launch.parse_seeds(" , ")


def test_sets_are_parsed_and_bad_ones_named() -> None:
    assert launch.parse_sets(["lr=1e-3,2e-3", "--T=6"]) == [("lr", ["1e-3", "2e-3"]), ("T", ["6"])]
    with pytest.raises(ValueError, match="'lr'"):
        launch.parse_sets(["lr"])


def test_grid_is_the_product_of_settings_times_seeds(tmp_path: Path) -> None:
    runs = launch.plan_runs(tmp_path, [0, 1], [("lr", ["1", "2"]), ("T", ["6"])])
    assert [r.folder.relative_to(tmp_path).as_posix() for r in runs] == [
        "lr=1_T=6/seed0", "lr=1_T=6/seed1", "lr=2_T=6/seed0", "lr=2_T=6/seed1"]
    assert runs[3].train_args() == ["--seed", "1", "--save_dir", str(runs[3].folder), "--lr", "2", "--T", "6"]
    assert launch.plan_runs(tmp_path, [4], [])[0].folder == tmp_path / "default" / "seed4"


FAKE_TRAIN = """
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
folder = Path(args[args.index("--save_dir") + 1])
counter = folder.parent.parent / "calls.txt"
with open(counter, "a") as f:  # one call, one byte: appends of concurrent runs do not mix
    f.write("x")
if "--fail" in args:
    sys.exit(3)
(folder / "args.json").write_text(json.dumps(args))
(folder / "gpus.txt").write_text(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))
"""


def test_runs_get_their_folders_skip_when_done_and_failures_are_counted(tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / "fake_train.py").write_text(FAKE_TRAIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    out = tmp_path / "sweep"
    common = ["--entry", "fake_train", "--set", "lr=1,2", "--jobs", "2", "--out", str(out)]
    argv = [*common, "--seeds", "0-1", "--", "--num_frames", "10"]
    assert launch.main(argv) == 0
    assert (out / "calls.txt").read_text() == "xxxx"
    lines = capsys.readouterr().out.splitlines()
    assert "started lr=2/seed1 on cpu" in lines
    counts = [line.partition(" in flight")[0] for line in lines if " done, " in line]
    assert sorted(count.rpartition(",")[0] for count in counts) == [f"[{k}/4 done, 0 failed" for k in range(1, 5)]
    assert counts[-1] == "[4/4 done, 0 failed, 0"  # the last run to end leaves none in flight
    assert any(line.startswith("[") and "lr=1/seed0: exit code 0 after 00:0" in line for line in lines)
    args = json.loads((out / "lr=2" / "seed1" / "args.json").read_text())
    assert args == ["--num_frames", "10", "--seed", "1", "--save_dir", str(out / "lr=2" / "seed1"), "--lr", "2"]
    assert (out / "lr=2" / "seed1" / "done").exists()
    assert launch.main(argv) == 0  # everything done: nothing runs again
    assert (out / "calls.txt").read_text() == "xxxx"
    capsys.readouterr()
    assert launch.main([*common, "--seeds", "0-2", "--", "--fail"]) == 1  # only the two new seed-2 runs, failing
    assert (out / "calls.txt").read_text() == "xxxxxx"
    assert "[2/2 done, 2 failed, 0 in flight, about 00:00 left] " in capsys.readouterr().out
    assert not (out / "lr=1" / "seed2" / "done").exists()
    assert (out / "lr=1" / "seed2" / "console.txt").exists()


def test_one_key_of_an_options_setting_varies_and_the_base_keys_stay(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "fake_train.py").write_text(FAKE_TRAIN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    config = tmp_path / "c.yaml"
    config.write_text("game_options: frame_skip=10,army_shaping=1\nlr: 0.1\n")
    out = tmp_path / "sweep"
    common = ["--entry", "fake_train", "--config", str(config), "--out", str(out),
              "--set", "game_options.army_shaping=0,0.05", "--set", "game_options.flag_shaping=2"]
    assert launch.main(common) == 0
    args = json.loads((out / "army_shaping=0.05_flag_shaping=2" / "seed0" / "args.json").read_text())
    # the config's keys, then the run's: parse_options lets the later army_shaping win
    assert args[args.index("--game_options") + 1] == "frame_skip=10,army_shaping=1,army_shaping=0.05,flag_shaping=2"
    launch.main([*common, "--out", str(tmp_path / "other"), "--", "--game_options", "variant=ctf"])
    args = json.loads((tmp_path / "other" / "army_shaping=0_flag_shaping=2" / "seed0" / "args.json").read_text())
    assert args[-2:] == ["--game_options", "variant=ctf,army_shaping=0,flag_shaping=2"]


def test_device_slots_set_the_visible_gpu(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "fake_train.py").write_text(FAKE_TRAIN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    out = tmp_path / "sweep"
    launch.main(["--entry", "fake_train", "--seeds", "0", "--devices", "cuda:1", "--out", str(out)])
    record = json.loads((out / "default" / "seed0" / "launch.json").read_text())
    assert record["device"] == "cuda:1" and record["command"][-2:] == ["--device", "cuda"]
    assert record["command"][:3] == [sys.executable, "-m", "fake_train"]


def test_a_real_sweep_of_rlpytorch_train_gives_run_folders_that_plot_reads(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    argv = ["--seeds", "0-1", "--set", "lr=2e-3", "--jobs", "2", "--out", str(out), "--",
            "--game", "cartpole", "--num_games", "16", "--actor_batch", "16", "--train_batch", "16",
            "--num_frames", "3000", "--log_every", "1000",
            "--no-progress", "--no-eval_at_end"]
    assert launch.main(argv) == 0
    for seed in (0, 1):
        run = out / "lr=2e-3" / f"seed{seed}"
        assert (run / "done").exists() and (run / "config.yaml").exists()
        config = (run / "config.yaml").read_text()
        assert f"seed: {seed}" in config and "lr: 0.002" in config
    from rlpytorch import plot

    (curve,) = plot.main([str(out), "--out", str(tmp_path / "c.png"), "--y", "fps"])
    assert curve.label == "lr=2e-3" and len(curve.runs) == 2


def test_a_failed_run_is_tried_again_from_its_checkpoint_or_beside_its_earlier_files(tmp_path: Path) -> None:
    resumable, early = tmp_path / "resumable", tmp_path / "early"
    for folder in (resumable, early):
        folder.mkdir()
        (folder / "config.yaml").write_text("seed: 0\n")
        (folder / "console.txt").write_text("the launch's own file\n")
    (resumable / "last.pt").write_bytes(b"checkpoint")
    assert launch.retry_args(resumable) == ["--resume", str(resumable)]
    assert (resumable / "config.yaml").exists()  # left for the resumed run
    assert launch.retry_args(early) == [] and launch.retry_args(tmp_path / "fresh") == []
    assert (early / "attempt1" / "config.yaml").read_text() == "seed: 0\n" and not (early / "config.yaml").exists()
    assert (early / "console.txt").exists()


def test_help_shows_the_defaults(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        launch.main(["--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: runs/sweep)" in text and "(default: local)" in text and "(default: 1)" in text


def test_the_ray_backend_without_ray_is_one_clear_error(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails as when it is not installed
    with pytest.raises(SystemExit) as stop:
        launch.main(["--backend", "ray"])
    assert stop.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.endswith("--backend ray needs the ray package: pip install 'elf-platform[ray]'")


# The suite runs in two pytest workers (pytest-xdist): the tests that start a Ray cluster share one
# worker, so no two local clusters start at once on the machine.
RAY = pytest.mark.xdist_group("ray")


@RAY
@pytest.mark.timeout(900)  # Ray starts its workers slowly on a loaded machine: 332 s once beside other work
def test_the_ray_backend_runs_the_grid_as_tasks_with_resources_and_resumes(tmp_path: Path, monkeypatch,
                                                                            capsys) -> None:
    import ray

    (tmp_path / "fake_train.py").write_text(FAKE_TRAIN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # before ray.init: its workers inherit it
    monkeypatch.chdir(tmp_path)  # a relative --out: the tasks get absolute folders
    ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False)  # a GPU Ray only counts
    try:
        common = ["--backend", "ray", "--entry", "fake_train", "--set", "lr=1,2", "--out", "sweep"]
        assert launch.main([*common, "--seeds", "0", "--gpus_per_run", "0.5", "--cpus_per_run", "1"]) == 0
        run = tmp_path / "sweep" / "lr=2" / "seed0"
        args = ["--seed", "0", "--save_dir", str(run), "--lr", "2", "--device", "cuda"]  # absolute folder, GPU
        assert json.loads((run / "args.json").read_text()) == args
        assert (run / "gpus.txt").read_text() == "0"  # the GPU Ray reserved for the task, as Ray set it
        assert (run / "done").exists()
        assert launch.main([*common, "--seeds", "0-1", "--", "--fail"]) == 1  # the done runs are skipped
        assert (tmp_path / "sweep" / "calls.txt").read_text() == "xxxx"
        assert "[2/2 done, 2 failed, 0 in flight, about 00:00 left] " in capsys.readouterr().out
    finally:
        ray.shutdown()


def test_an_unknown_config_is_one_line_naming_it(tmp_path) -> None:
    from rlpytorch.training import command_line

    with pytest.raises(SystemExit) as exit_:
        command_line(launch.main, "python -m rlpytorch.launch", ["--config", "nosuch", "--out", str(tmp_path / "s")])
    message = str(exit_.value.code)
    assert message.startswith("python -m rlpytorch.launch: error: --config nosuch: no such file")
    assert "\n" not in message and not (tmp_path / "s").exists()


@pytest.mark.parametrize("number, to_group", [(signal.SIGINT, True), (signal.SIGTERM, False)])
def test_a_stopped_sweep_saves_its_runs_marks_none_done_and_says_so_in_one_line(tmp_path: Path, number,
                                                                                 to_group) -> None:
    """Ctrl-C reaches a terminal's whole process group, a job manager's SIGTERM
    the launcher alone: either way each run in flight gets one signal, saves its
    frame and ends as interrupted, the queued run never starts, and no run is
    marked done, so the same command resumes them all."""
    out = tmp_path / "sweep"
    command = [sys.executable, "-m", "rlpytorch.launch", "--seeds", "0-2", "--jobs", "2", "--out", str(out), "--",
               "--game", "cartpole", "--num_games", "8", "--actor_batch", "8", "--train_batch", "8",
               "--num_threads", "1", "--num_frames", "1000000000", "--log_every", "500", "--no-progress",
               "--no-eval_at_end"]
    launcher = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)  # its own group, as a terminal's foreground job
    try:
        while not all((out / "default" / f"seed{seed}" / "progress.csv").exists() for seed in (0, 1)):
            assert launcher.poll() is None, launcher.communicate()
            time.sleep(0.05)  # polls for files; pytest-timeout bounds a hang
        os.killpg(launcher.pid, number) if to_group else launcher.send_signal(number)
        stdout, stderr = launcher.communicate()
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.communicate()
    assert launcher.returncode == launch.INTERRUPTED
    assert stderr == f"interrupted: the runs in flight saved; the same command resumes the sweep in {out}\n"
    for seed in (0, 1):
        run = out / "default" / f"seed{seed}"
        assert "stopped by a signal, saved" in stdout and not (run / "done").exists()
        stopped = next(line for line in (run / "console.txt").read_text().splitlines()
                       if line.startswith("stopped by a signal at frame "))
        frames = int(stopped.split()[6].rstrip(":").replace(",", ""))
        assert read_checkpoint(run / "last.pt")["resume"]["trainer"]["frames"] == frames > 0
    assert not (out / "default" / "seed2").exists()  # queued: never started
    assert [run.folder.name for run in launch.plan_runs(out, [0, 1, 2], []) if not run.done] == [
        "seed0", "seed1", "seed2"]
    assert launch.retry_args(out / "default" / "seed0") == ["--resume", str(out / "default" / "seed0")]


def test_a_killed_launcher_s_runs_save_and_end_instead_of_training_on_unseen(tmp_path: Path) -> None:
    """SIGKILL gives the launcher no chance to stop its runs (each in a session
    of its own, out of reach of its group): each run sees its parent gone,
    saves its frame and ends as interrupted, resumable by the same command."""
    out = tmp_path / "sweep"
    command = [sys.executable, "-m", "rlpytorch.launch", "--seeds", "0-1", "--jobs", "2", "--out", str(out), "--",
               "--game", "cartpole", "--num_games", "8", "--actor_batch", "8", "--train_batch", "8",
               "--num_threads", "1", "--num_frames", "1000000000", "--log_every", "500", "--no-progress",
               "--no-eval_at_end"]
    launcher = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs = [out / "default" / f"seed{seed}" for seed in (0, 1)]
    try:
        try:
            while not all((run / "progress.csv").exists() for run in runs):
                assert launcher.poll() is None
                time.sleep(0.05)  # polls for files; pytest-timeout bounds a hang
        finally:
            launcher.kill()
            launcher.wait()
        for run in runs:
            while not (stopped := [line for line in (run / "console.txt").read_text().splitlines()
                                   if line.startswith("stopped by a signal at frame ")]):
                time.sleep(0.05)  # the run stops by itself; pytest-timeout bounds a run that trains on
            frames = int(stopped[0].split()[6].rstrip(":").replace(",", ""))
            assert read_checkpoint(run / "last.pt")["resume"]["trainer"]["frames"] == frames > 0
            assert not (run / "done").exists()
    finally:
        kill_processes_naming(out)  # should the watch fail, its runs would otherwise train on past the suite
    assert launch.retry_args(runs[0]) == ["--resume", str(runs[0])]


def kill_processes_naming(folder: Path) -> None:
    """SIGKILL to every process of this machine whose command line names ``folder`` (Linux's /proc)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(folder).encode() in cmdline.read_bytes():
                os.kill(int(cmdline.parent.name), signal.SIGKILL)
        except OSError:
            pass  # ended meanwhile, or not ours to read


WAITING_TRAIN = """
import sys, time
from pathlib import Path
args = sys.argv[1:]
folder = Path(args[args.index("--save_dir") + 1])
with open(folder.parent.parent / "calls.txt", "a") as f:
    f.write("x")
(folder / "started").touch()
while not (folder.parent.parent / "go").exists():
    time.sleep(0.01)
"""


def test_the_same_sweep_started_twice_is_refused_in_one_line_naming_the_first(tmp_path: Path) -> None:
    from rlpytorch.training import command_line

    (tmp_path / "waiting_train.py").write_text(WAITING_TRAIN)
    out = tmp_path / "sweep"
    argv = ["--entry", "waiting_train", "--seeds", "0", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    first = subprocess.Popen([sys.executable, "-m", "rlpytorch.launch", *argv], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        while not (out / "default" / "seed0" / "started").exists():
            assert first.poll() is None, first.communicate()
            time.sleep(0.01)  # polls for a file; pytest-timeout bounds a hang
        with pytest.raises(SystemExit) as exit_:
            command_line(launch.main, "python -m rlpytorch.launch", argv)
        assert str(exit_.value.code) == (f"python -m rlpytorch.launch: error: --out {out} is in use by process "
                                         f"{first.pid}: one process writes into it at a time")
        (out / "go").touch()
        assert first.wait() == 0, first.communicate()
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate()
    assert (out / "calls.txt").read_text() == "x"  # its one run trained once
    assert launch.main(argv) == 0 and (out / "calls.txt").read_text() == "x"  # free again, and done


def process_tree(root: int) -> set[tuple[int, str]]:
    """``root`` and its descendants, each as (pid, start time): a pid given to a new process later is not theirs."""
    parents, started = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended meanwhile
        pid = int(stat.parent.name)
        parents[pid], started[pid] = int(fields[1]), fields[19]
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add((pid, started.get(pid, "")))
        todo += [child for child, parent in parents.items() if parent == pid]
    return tree


def running(processes: set[tuple[int, str]]) -> set[tuple[int, str]]:
    """Those of ``processes`` still running (a zombie has ended)."""
    left = set()
    for pid, started in processes:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if fields[19] == started and fields[0] != "Z":
            left.add((pid, started))
    return left


@RAY
@pytest.mark.timeout(600)
def test_a_ray_sweep_killed_or_stopped_saves_its_runs_leaves_nothing_running_and_resumes(tmp_path: Path) -> None:
    """Killed (SIGKILL), the launcher's run still saves and ends, and the Ray it
    started goes too, all its processes; the same command resumes the run, and
    stopped (SIGTERM) saves it again and shuts Ray down."""
    out = tmp_path / "sweep"
    command = [sys.executable, "-m", "rlpytorch.launch", "--backend", "ray", "--seeds", "0", "--out", str(out), "--",
               "--game", "cartpole", "--num_games", "8", "--actor_batch", "8", "--train_batch", "8",
               "--num_threads", "1", "--num_frames", "1000000000", "--log_every", "500", "--no-progress",
               "--no-eval_at_end"]
    run = out / "default" / "seed0"
    env = {name: value for name, value in os.environ.items() if name != "RAY_ADDRESS"}  # a Ray of its own
    saved = []
    for stop, started in ((signal.SIGKILL, lambda: (run / "progress.csv").exists()),
                          (signal.SIGTERM, lambda: "--resume" in (run / "launch.json").read_text() and any(
                              line.startswith("F ") for line in (run / "console.txt").read_text().splitlines()))):
        launcher = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                                    start_new_session=True)
        processes: set[tuple[int, str]] = set()
        try:
            while not started():
                assert launcher.poll() is None, launcher.communicate()
                time.sleep(0.1)  # polls for files; pytest-timeout bounds a hang
            processes = process_tree(launcher.pid)  # Ray's, the task's, the run's
            launcher.send_signal(stop)
            _, stderr = launcher.communicate()
            while running(processes):
                time.sleep(0.1)  # pytest-timeout bounds a process that stays
        finally:
            for pid, _ in running(processes):
                os.kill(pid, signal.SIGKILL)
        stopped = [line for line in (run / "console.txt").read_text().splitlines()
                   if line.startswith("stopped by a signal at frame ")]
        frames = int(stopped[0].split()[6].rstrip(":").replace(",", ""))
        assert read_checkpoint(run / "last.pt")["resume"]["trainer"]["frames"] == frames > 0
        assert not (run / "done").exists()
        saved.append(frames)
    assert launcher.returncode == launch.INTERRUPTED
    assert stderr.endswith(f"interrupted: the runs in flight saved; the same command resumes the sweep in {out}\n")
    assert saved[1] > saved[0]  # resumed: it went on from the first stop's frames
