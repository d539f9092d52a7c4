"""The replay methods under ``--runner multi``: the replay, target and priorities in
the learner process, the games stepping here; the replay ratio counted in frames
stepped, held exactly with ``wait``, its shortfall counted with ``drop``."""

import math
import multiprocessing
import os
import queue
import time

import pytest
import torch
from fakes import fake_loader

import rlpytorch
from rlpytorch.acting.sampler import Sampler
from rlpytorch.learners.value_trainer import ValueTrainer, value_interface
from rlpytorch.methods.dqn import DQN
from rlpytorch.methods.target_network import TargetNetwork
from rlpytorch.models.base import read_checkpoint
from rlpytorch.models.q_networks import QNetwork, QSettings
from rlpytorch.recipes import engine
from rlpytorch.replay import Replay
from rlpytorch.run.multi_process import LearnerError, MultiProcessRun, _LearnerLoop
from rlpytorch.run.single_process import window_frames

SMALL = dict(num_games=8, actor_batch=8, train_batch=8, num_threads=1, progress=False, hidden=16, replay_batch=16,
             learning_starts=400, eval_episodes=4, tensorboard=False, log_every=10000)


class CountingRun(MultiProcessRun):
    """Records the frames of every window handed to the train callback, and the
    frames stepped when the last one was (the learner's ratio counts those)."""

    runs: list = []

    def run(self, gc, until=None):
        CountingRun.runs.append(self)
        self.frames_windowed = self.windows = self.frames_at_last_window = 0
        return super().run(gc, until)

    def _enqueue(self, batch):
        self.frames_windowed += window_frames(batch)
        self.windows += 1
        self.frames_at_last_window = self.trainer.frames
        return super()._enqueue(batch)


@pytest.fixture
def counting_runs(monkeypatch):
    CountingRun.runs = []
    monkeypatch.setitem(engine.RUNNERS, "multi", CountingRun)
    return CountingRun.runs


@pytest.mark.parametrize("method, ratio", [("dqn", 0.1), ("r2d2", 0.02)])  # both prioritized: priorities updated there
def test_replay_method_under_multi_stores_every_window_and_holds_the_ratio_exactly_by_default(
        tmp_path, counting_runs, method, ratio):
    run_dir = tmp_path / "run"
    out = rlpytorch.train(rlpytorch.config(method=method, runner="multi", num_frames=2000, replay_ratio=ratio,
                                           prioritized=True, save_dir=str(run_dir), **SMALL))
    summary, run = out.summary, counting_runs[0]
    # The replay methods wait for the learner by default, and the stats line says so.
    assert out.config.when_behind == "auto" and run.policy == "wait"
    stats_line = next(line for line in (run_dir / "log.txt").read_text().splitlines() if line.startswith("F "))
    assert "  waited " in stats_line and "dropped" not in stats_line
    assert summary.frames >= 2000 and len(out.eval.returns) == 4
    # Frames stepped = frames stored + frames dropped (none), up to the frames not yet in a window.
    assert run.dropped == 0 and run.frames_learned == run.frames_windowed
    T = out.config.T
    assert 0 <= summary.frames - run.frames_windowed <= T * 8
    # Back-pressure: every update owed at the last window was made, replay_ratio per frame stepped.
    assert summary.updates == int(ratio * (run.frames_at_last_window - 400)) > 0
    assert run.updates_dropped == 0
    assert run._extra_stats()["replay_ratio_achieved"] == summary.updates / (summary.frames - 400)
    assert read_checkpoint(run_dir / "last.pt")["step"] == summary.updates
    # The epsilon schedule stayed with the actor, on the frames it stepped (the method's schedule).
    config = out.config
    progress = summary.frames / config.epsilon_frames
    assert progress < 1 and run.trainer.sampler.epsilon == pytest.approx(
        config.epsilon + (config.epsilon_final - config.epsilon) * progress)
    # The optimizer, target and replay stayed in the learner, which sent them as it exited:
    # the checkpoint holds them (resuming it: tests/rlpytorch/test_resume.py).
    state = read_checkpoint(run_dir / "last.pt")["resume"]
    assert state["trainer"]["updates"] == state["runner"]["learner"]["updates"] == summary.updates
    assert state["trainer"]["replay"]["store"]["count"].sum() == run.frames_windowed + 8  # a window's first row


def test_sac_runs_under_multi_with_its_replay_in_the_learner(tmp_path, counting_runs):
    out = rlpytorch.train(rlpytorch.config("pendulum_sac", runner="multi", when_behind="wait", num_frames=400,
                                           num_games=4, actor_batch=4, train_batch=4, net_arch="16,16",
                                           replay_batch=16, learning_starts=100, replay_ratio=0.25, progress=False,
                                           eval_episodes=2, tensorboard=False, save_dir=str(tmp_path / "run")))
    summary, run = out.summary, counting_runs[0]
    assert summary.updates == int(0.25 * (run.frames_at_last_window - 100)) > 0
    assert run.frames_learned == run.frames_windowed and len(out.eval.returns) == 2
    log_alpha = read_checkpoint(tmp_path / "run" / "last.pt")["state_dict"]["temperature.log_alpha"]
    assert log_alpha.item() != pytest.approx(math.log(out.config.init_temperature))  # learned over there


class SlowDQN(DQN):
    """DQN whose steps take a while, so that the games wait for the learner (with ``wait``)."""

    def step(self, mi, batch):
        time.sleep(0.005)
        return super().step(mi, batch)


class PacedDQN(DQN):
    """DQN whose every update takes a permit that the games give, one per batch they play
    (``PacedRun``), until they stop: on the fake CartPole (8 games, replay ratio 0.25) 2
    updates are owed per batch, so the learner falls behind whatever the machine's speed."""

    def step(self, mi, batch):
        permits, stopping = self.pace
        while not stopping.is_set() and not permits.acquire(timeout=0.01):
            pass
        return super().step(mi, batch)


class PacedRun(CountingRun):
    """Gives the learner's ``PacedDQN`` one permit per batch played (and per wait for a
    free slot), and every update it asks for once the games stop."""

    def __init__(self, trainer, **options):
        context = multiprocessing.get_context("spawn")
        trainer.method.pace = self.permits, self.stopping = context.Semaphore(0), context.Event()
        super().__init__(trainer, **options)

    def _poll(self, wait=0.0):
        self.permits.release()
        super()._poll(wait)

    def _stop_learner(self):
        self.stopping.set()  # the updates owed after the end mark are made without the games
        super()._stop_learner()


class BrokenDQN(DQN):
    def step(self, mi, batch):
        raise FloatingPointError("TD error exploded on purpose")


def value_run(method, run_type=None, **options):
    """A DQN trainer on the fake CartPole under ``MultiProcessRun`` (``CountingRun`` unless
    ``run_type`` is given; replay ratio 0.25 after 200 frames)."""
    torch.manual_seed(0)
    loader = fake_loader(num_games=8, T=5)
    gc = loader.context(seed=0)
    model = QNetwork(loader.observation_spec(gc), loader.num_actions(gc), QSettings(hidden=16))
    ValueTrainer.add_tags(loader, gc)
    replay = Replay(8, model.obs_keys, replay_capacity=2000, seed=0)
    trainer = ValueTrainer(value_interface(model), method, Sampler("epsilon_greedy", seed=0), replay,
                           replay_ratio=0.25, learning_starts=200, replay_batch=16)
    run = (run_type or CountingRun)(trainer, join_timeout=60.0, progress=False, save_dir="", log_every=10**9,
                                    **options)
    return gc, trainer, run


@pytest.mark.parametrize("when_behind", ["drop", "wait"])
def test_a_slow_learner_drops_updates_not_windows_with_drop_and_holds_the_ratio_with_wait(when_behind):
    if when_behind == "wait":
        method, run_type = SlowDQN(target=TargetNetwork(50)), CountingRun
    else:  # paced by the batches played, not by time: it falls behind on any machine
        method, run_type = PacedDQN(target=TargetNetwork(50)), PacedRun
    gc, trainer, run = value_run(method, run_type, num_frames=1200, batch_slots=2, when_behind=when_behind)
    summary = run.run(gc)
    assert not run._learner.is_alive() and run._learner.exitcode == 0
    # No window is dropped, even with drop: the replay holds each game's steps in order.
    assert run.dropped == 0 and run.frames_learned == run.frames_windowed
    owed = int(0.25 * (run.frames_at_last_window - 200))
    assert summary.updates + run.updates_dropped == owed  # each owed update made or dropped, none twice
    achieved = run._extra_stats()["replay_ratio_achieved"]
    if when_behind == "wait":
        assert run.updates_dropped == 0 and achieved == pytest.approx(0.25, abs=0.25 * 8 * 4 / 1000)
    else:  # the learner fell behind: the games did not wait, and the ratio achieved shows it
        assert run.updates_dropped > 0 and achieved < 0.25


def test_an_error_in_the_replay_learner_reaches_the_user_with_its_traceback():
    gc, _, run = value_run(BrokenDQN(), num_frames=10**9)
    with pytest.raises(LearnerError, match="TD error exploded on purpose"):
        run.run(gc)
    assert gc.stopped and not run._learner.is_alive()


class OnePerFrame:
    """A learning half owing one update per frame stepped (replay ratio 1, no learning starts)."""

    model = None

    def __init__(self):
        self.frames = 0

    def take(self, window, lanes, frames, progress):
        self.frames = frames
        return []

    def owed(self, updates):
        return max(0, self.frames - updates)

    def update(self):
        return {"loss": 1.0}


@pytest.mark.parametrize("when_behind, made, dropped", [("wait", 40, 0), ("drop", 20, 20)])
def test_learner_loop_lags_at_most_batch_slots_windows_by_hand(when_behind, made, dropped):
    # Four windows of 10 frames all waiting before the learner starts, then the end mark.
    # wait: each window's 10 updates before the next window: 40. drop, 2 slots: on taking
    # window 3 the 10 updates owed at window 1 are due and none is made: dropped; on taking
    # window 4 those of window 2 (10 more); the last 20 are made after the end mark.
    queues = {"full": queue.Queue(), "free": queue.Queue(), "news": queue.Queue()}
    for k in range(1, 5):
        queues["full"].put((k % 2, 2, 10 * k, 0.0, 10, [0, 1]))
    queues["full"].put(None)
    published = []
    setup = {"parent": os.getppid(), "actor_sync_every": 5, "when_behind": when_behind, "batch_slots": 2}
    loop = _LearnerLoop(setup, OnePerFrame(), {"terminal": torch.zeros(2, 3, 2)}, queues,
                        lambda: published.append(1))
    loop.run()
    assert (loop.updates, loop.dropped) == (made, dropped)
    assert len(published) == made // 5  # every actor_sync_every updates
    news = [queues["news"].get_nowait()[1] for _ in range(queues["news"].qsize())]
    assert sum(len(stats) for stats, _, _ in news) == made and sum(frames for _, frames, _ in news) == 40
    assert news[-1][2] == dropped
    assert sorted(queues["free"].get_nowait() for _ in range(4)) == [0, 0, 1, 1]  # every slot freed


def test_pong_dqn_config_runs_with_frame_based_replay_and_holds_its_ratio(tmp_path, counting_runs):
    """``--config dqn_pong`` (its multi runner, 3-step Double Dueling DQN
    on 4-frame stacks stored one frame per step), shrunk to a few hundred frames on the CPU."""
    out = rlpytorch.train(rlpytorch.config("dqn_pong", num_frames=600, num_games=4, num_workers=2, actor_batch=4,
                                           train_batch=4, hidden=16, replay_batch=8, learning_starts=200,
                                           eval_at_end=False, progress=False, tensorboard=False,
                                           save_dir=str(tmp_path / "run")))
    summary, run, config = out.summary, counting_runs[0], out.config
    assert (config.frame_stack, config.n_step, config.double, config.dueling) == (4, 3, True, True)
    assert run.frames_learned == run.frames_windowed
    assert summary.updates == int(config.replay_ratio * (run.frames_at_last_window - 200)) > 0
