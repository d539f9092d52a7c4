"""Python-hosted games: Gymnasium environments in worker processes under the
GameContext API (batches, replies, windows, auto-reset, hooks, faults)."""

import os
import signal

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import elfpy
from elfpy.gym_host import game_seed

from .helpers import assert_released


class ToyEnv(gym.Env):
    """Dict observation (with text), MultiDiscrete action; ends after 5 steps."""

    observation_space = spaces.Dict({
        "pos": spaces.Box(-100, 100, (2,), np.float32),
        "mission": spaces.Text(16),
        "step": spaces.Discrete(10),
    })
    action_space = spaces.MultiDiscrete([3, 2])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = np.zeros(2, np.float32)
        self.t = 0
        return self.observe(), {}

    def observe(self):
        return {"pos": self.pos.copy(), "mission": "go east", "step": self.t}

    def step(self, action):
        self.pos += np.asarray(action, np.float32)
        self.t += 1
        return self.observe(), float(action.sum()), self.t == 5, False, {}


class FailingEnv(ToyEnv):
    def step(self, action):
        if self.t == 2:
            raise RuntimeError("boom at step 2")
        return super().step(action)


def tokens(observation):
    words = observation["mission"].split()
    ids = np.zeros(4, np.int64)
    ids[: len(words)] = [len(w) for w in words]
    return {**observation, "mission": ids}


def double_reward(observation, action, reward, done):
    return 2.0 * reward


def test_hosted_cartpole_matches_gymnasium_row_for_row_with_auto_reset():
    seed, num_games = 5, 2
    gc = elfpy.GameContext("gym:CartPole-v1", num_games=num_games, num_workers=2, num_threads=1, seed=seed,
                           deterministic=True)
    gc.add_tag("actor", batch_size=num_games, inputs=["s", "r", "terminal", "final_s", "episode_return"],
               replies=["a"])
    references = [gym.make("CartPole-v1") for _ in range(num_games)]
    expected = [(env.reset(seed=game_seed(seed, g))[0], 0.0, False, None) for g, env in enumerate(references)]
    rng = np.random.default_rng(0)
    episodes = 0
    with gc:
        for batch in gc:
            for row, game in enumerate(batch.game_ids):
                obs, reward, terminal, final = expected[game]
                np.testing.assert_allclose(batch["s"][row], obs, atol=1e-6)
                assert batch["r"][row] == reward and batch["terminal"][row] == terminal
                if terminal:
                    np.testing.assert_allclose(batch["final_s"][row], final, atol=1e-6)
                    episodes += 1
            actions = rng.integers(0, 2, len(batch))
            for game, action in zip(batch.game_ids, actions, strict=True):
                obs, reward, terminated, truncated, _ = references[game].step(int(action))
                final = obs
                if terminated or truncated:
                    obs, _ = references[game].reset()
                expected[game] = (obs, reward, terminated or truncated, final)
            batch.reply({"a": actions})
            if episodes >= 6:
                break


def test_train_windows_rebuild_the_episode_returns():
    gc = elfpy.GameContext("gym:CartPole-v1", num_games=4, num_workers=2, num_threads=1, seed=0)
    gc.add_tag("actor", batch_size=4, inputs=["s"], replies=["a"])
    gc.add_tag("train", batch_size=4, inputs=["r", "terminal", "episode_return"], T=5)
    gc.reg_callback("actor", lambda batch: {"a": np.random.randint(0, 2, len(batch))})
    sums, checked = {}, 0

    def train(batch):
        nonlocal checked
        for t in range(1, 5):  # row 0 repeats the previous window's last row
            for col, game in enumerate(batch.game_ids):
                sums[game] = sums.get(game, 0.0) + batch["r"][t, col]
                if batch["terminal"][t, col]:
                    assert sums[game] == pytest.approx(batch["episode_return"][t, col])
                    sums[game] = 0.0
                    checked += 1

    gc.reg_callback("train", train)
    with gc:
        while checked < 8:
            gc.run()


def test_dict_observations_multidiscrete_actions_and_hooks():
    gc = elfpy.GameContext(ToyEnv, num_games=3, num_workers=2, num_threads=1, seed=0, preprocess=tokens,
                           reshape_reward=double_reward)
    spec = gc.spec()
    assert gc.game == "py:ToyEnv"
    assert (spec["pos"].dtype, spec["pos"].shape) == (np.float32, (2,))
    assert (spec["mission"].dtype, spec["mission"].shape) == (np.int64, (4,))
    assert (spec["step"].dtype, spec["step"].shape) == (np.int64, ())
    assert (spec["a"].dtype, spec["a"].shape, spec["a"].bounds) == (np.int64, (2,), (0.0, 2.0))
    gc.add_tag("actor", batch_size=3, inputs=["pos", "mission", "step", "r", "terminal", "final_pos"],
               replies=["a"])
    steps = 0
    with gc:
        for batch in gc:
            assert np.all(batch["mission"] == [2, 4, 0, 0])
            if steps > 0:
                assert np.all(batch["r"] == 2.0 * 3)  # (2 + 1) per step, doubled
            ended = batch["terminal"]
            assert np.all(ended == (steps == 5))
            if ended.any():
                assert np.all(batch["final_pos"] == [10, 5]) and np.all(batch["pos"] == 0)
                break
            assert np.all(batch["step"] == steps) and np.all(batch["pos"] == [2 * steps, steps])
            batch.reply({"a": np.tile([2, 1], (3, 1))})
            steps += 1


def test_box_actions_reach_the_environment():
    gc = elfpy.GameContext("gym:Pendulum-v1", num_games=2, num_workers=1, num_threads=1, seed=0)
    assert (gc.spec()["a"].dtype, gc.spec()["a"].shape, gc.spec()["a"].bounds) == (np.float32, (1,), (-2.0, 2.0))
    gc.add_tag("actor", batch_size=2, inputs=["s", "r"], replies=["a"])
    rewards = []
    with gc:
        for i, batch in enumerate(gc):
            rewards.append(batch["r"].copy())
            batch.reply({"a": np.full((2, 1), 2.0, np.float32)})
            if i == 20:
                break
    assert np.all(np.concatenate(rewards[1:]) < 0)  # Pendulum's cost is always positive


def test_bad_replies_and_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="preprocess="):
        elfpy.GameContext(ToyEnv, num_games=2, num_workers=1)  # text observation without a hook
    with pytest.raises(ValueError, match="Python-hosted"):
        elfpy.GameContext("cartpole", num_games=2, preset="atari")
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        elfpy.GameContext("gym:CartPole-v1", num_games=2, preset="nope")
    gc = elfpy.GameContext(ToyEnv, num_games=2, num_workers=1, num_threads=1, preprocess=tokens)
    gc.add_tag("actor", batch_size=2, inputs=["pos"], replies=["a"])
    pids = gc.worker_pids
    gc.reg_callback("actor", lambda batch: {"a": np.tile([0, 2], (2, 1))})  # 2 is out of range for nvec 2
    with gc:
        with pytest.raises(ValueError, match=r"key 'a': row 0 \(game \d\) replied component 1 = 2, valid range"):
            gc.run()  # refused by the engine: no game steps with it
        with pytest.raises(elfpy.GameError, match="component 1 = 2"):
            gc.run()  # the context failed
        assert_released(pids)  # at once, not only at stop()


def test_an_environment_that_raises_names_the_game_and_releases_everything():
    gc = elfpy.GameContext(FailingEnv, num_games=4, num_workers=2, num_threads=1, preprocess=tokens)
    gc.add_tag("actor", batch_size=2, inputs=["pos"], replies=["a"])
    gc.reg_callback("actor", lambda batch: {"a": np.zeros((len(batch), 2), np.int64)})
    pids = gc.worker_pids
    with gc:
        with pytest.raises(elfpy.GameError, match=r"game \d \('py:FailingEnv'\): RuntimeError: boom at step 2"):
            for _ in range(100):
                gc.run()
        assert_released(pids)  # at once, not only at stop()
        with pytest.raises(elfpy.GameError, match="boom at step 2"):
            gc.run()  # stays failed


def test_a_killed_worker_is_reported_and_nothing_hangs():
    gc = elfpy.GameContext("gym:CartPole-v1", num_games=4, num_workers=2, num_threads=1)
    gc.add_tag("actor", batch_size=4, inputs=["s"], replies=["a"])
    gc.reg_callback("actor", lambda batch: {"a": np.zeros(len(batch), np.int64)})
    pids = gc.worker_pids
    with gc:
        for _ in range(5):
            gc.run()
        os.kill(pids[1], signal.SIGKILL)
        with pytest.raises(elfpy.GameError, match=r"worker process 1 \(pid \d+, games 2-3\) died with exit code -9"):
            for _ in range(10_000):
                gc.run()
        assert_released(pids)  # at once, not only at stop()


def test_atari_preset_stacks_84x84_frames_and_clips_rewards():
    gc = elfpy.GameContext("gym:ALE/Pong-v5", num_games=2, num_workers=2, num_threads=1, seed=0, preset="atari")
    spec = gc.spec()
    assert gc.game == "gym:ALE/Pong-v5 (atari)"
    assert (spec["s"].dtype, spec["s"].shape) == (np.uint8, (4, 84, 84))
    assert spec["a"].space.n == 6
    gc.add_tag("actor", batch_size=2, inputs=["s", "r"], replies=["a"])
    frames, rewards = [], []
    with gc:
        for i, batch in enumerate(gc):
            frames.append(batch["s"].copy())
            rewards.append(batch["r"].copy())
            batch.reply({"a": np.random.randint(0, 6, 2)})
            if i == 60:
                break
    assert set(np.unique(np.concatenate(rewards))) <= {-1.0, 0.0, 1.0}
    assert np.array_equal(frames[10][:, :3], frames[9][:, 1:])  # the stack shifts by one frame per step
    assert frames[-1].max() > frames[-1].min()  # real pictures, not blanks


class RegisteredEnv(gym.Env):
    """Known to the workers only through the registration in the test's own
    process: its observation is `start` plus the steps taken."""

    observation_space = spaces.Box(-np.inf, np.inf, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, start: float = 0.0):
        self.start = start

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([self.start], np.float32), {}

    def step(self, action):
        self.t += 1
        return np.array([self.start + self.t], np.float32), 1.0, False, False, {}


@pytest.mark.parametrize("entry_point", [RegisteredEnv, f"{__name__}:RegisteredEnv"], ids=["class", "module_path"])
def test_an_environment_registered_in_this_process_runs_in_the_workers(entry_point):
    env_id = f"ElfTestRegistered{'Class' if callable(entry_point) else 'Path'}-v0"
    gym.register(id=env_id, entry_point=entry_point, kwargs={"start": 7.0})
    try:
        gc = elfpy.GameContext(f"gym:{env_id}", num_games=2, num_workers=2, num_threads=1)
        gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
        with gc:
            for step, batch in enumerate(gc):
                assert np.all(batch["s"] == 7.0 + step)  # the registration's kwargs reached the workers
                batch.reply({"a": np.zeros(2, np.int64)})
                if step == 3:
                    break
    finally:
        gym.registry.pop(env_id)


class DictActionEnv(gym.Env):
    """Dict action of Discrete + MultiDiscrete + Box; keeps every action it was given."""

    observation_space = spaces.Box(-1, 1, (2,), np.float32)
    action_space = spaces.Dict({
        "move": spaces.Discrete(3, start=1),
        "pick": spaces.MultiDiscrete([2, 4]),
        "force": spaces.Box(-1, 1, (2,), np.float32),
    })

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        # the reward encodes the whole dict, so the test sees what env.step received
        assert set(action) == {"move", "pick", "force"} and isinstance(action["move"], int)
        reward = action["move"] * 1000 + action["pick"][0] * 100 + action["pick"][1] * 10 + action["force"].sum()
        return np.zeros(2, np.float32), float(reward), self.t == 3, False, {}


def test_dict_actions_reach_the_environment_as_the_dict_replied():
    gc = elfpy.GameContext(DictActionEnv, num_games=2, num_workers=1, num_threads=1, seed=0)
    spec = gc.spec()
    assert (spec["move"].dtype, spec["move"].shape, spec["move"].bounds) == (np.int64, (), (0.0, 2.0))
    assert (spec["pick"].dtype, spec["pick"].shape) == (np.int64, (2,))
    assert (spec["force"].dtype, spec["force"].shape, spec["force"].bounds) == (np.float32, (2,), (-1.0, 1.0))
    assert "a" not in spec
    gc.add_tag("actor", batch_size=2, inputs=["s", "r"], replies=["move", "pick", "force"])
    rewards = []
    with gc:
        for i, batch in enumerate(gc):
            rewards.append(batch["r"].copy())
            if i == 3:
                break
            batch.reply({"move": np.array([i % 3, 2]), "pick": np.array([[1, 3], [0, i]]),
                         "force": np.array([[0.25, 0.5], [-0.5, -0.25]], np.float32)})
    for i in range(3):  # move is stored from 0, passed from the space's start 1
        assert rewards[i + 1].tolist() == [(i % 3 + 1) * 1000 + 130 + 0.75, 3000 + 10 * i - 0.75]


class NestedActionEnv(DictActionEnv):
    action_space = spaces.Dict({"move": spaces.Discrete(3), "arm": spaces.Tuple((spaces.Discrete(2),))})


class ClashingActionEnv(DictActionEnv):
    observation_space = spaces.Dict({"move": spaces.Discrete(3)})

    def reset(self, *, seed=None, options=None):
        return {"move": 0}, {}


def test_nested_or_clashing_dict_actions_are_clear_errors():
    with pytest.raises(ValueError, match="action entry 'arm' .* is nested \\(Tuple\\)"):
        elfpy.GameContext(NestedActionEnv, num_games=1, num_workers=1)
    with pytest.raises(ValueError, match="action entry 'move' has the name of an observation key"):
        elfpy.GameContext(ClashingActionEnv, num_games=1, num_workers=1)


class GoalOnLastStepEnv(gym.Env):
    """Reaches its goal on step 3, which is also its time limit: terminated
    and truncated both, as MiniGrid reports a goal reached on its last step."""

    observation_space = spaces.Box(0, 3, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.array([self.t], np.float32), 1.0, self.t == 3, self.t == 3, {}


def test_an_episode_that_reaches_its_goal_on_its_time_limit_is_terminal_not_truncated():
    # Gymnasium's convention: a terminal state was reached, so there is nothing
    # to bootstrap from; the time limit cut nothing short.
    gc = elfpy.GameContext(GoalOnLastStepEnv, num_games=2, num_workers=1, num_threads=1, seed=0)
    gc.add_tag("actor", batch_size=2, inputs=["terminal", "truncated", "episode_length"], replies=["a"])
    rows = []
    with gc:
        for batch in gc:
            rows.append((batch["terminal"].tolist(), batch["truncated"].tolist(), batch["episode_length"].tolist()))
            batch.reply({"a": np.zeros(2, np.int64)})
            if len(rows) == 5:
                break
    assert rows[3] == ([True, True], [False, False], [3, 3])
    assert [terminal for terminal, _, _ in rows] == [[False] * 2] * 3 + [[True] * 2] + [[False] * 2]
