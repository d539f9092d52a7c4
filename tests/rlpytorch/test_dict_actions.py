"""Dict actions through the methods: one engine key per entry, replied by the
actor, carried by the windows, learned by ActorCritic and PPO, returned by predict."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

import rlpytorch
from rlpytorch.core.distributions import (
    CategoricalFamily,
    DictFamily,
    GaussianFamily,
    action_columns,
    action_replies,
    actions_in,
)
from rlpytorch.core.game_loader import GameLoader
from rlpytorch.models.loader import load_model

ENV_ID = "PickAndPush-v0"


class PickAndPush(gym.Env):
    """Each step shows a target (one-hot of 3) and a level in [-1, 1]; the action
    ``{pick, push}`` earns 1 for picking the target plus ``1 - |push - level|``.
    8 steps per episode: at most 16; a uniform policy gets about 6."""

    observation_space = spaces.Box(-1.0, 1.0, (4,), np.float32)
    action_space = spaces.Dict({"pick": spaces.Discrete(3), "push": spaces.Box(-1.0, 1.0, (1,), np.float32)})

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return self._show(), {}

    def _show(self):
        self.target = int(self.np_random.integers(3))
        self.level = float(self.np_random.uniform(-1.0, 1.0))
        obs = np.zeros(4, np.float32)
        obs[self.target], obs[3] = 1.0, self.level
        return obs

    def step(self, action):
        push = float(np.clip(np.asarray(action["push"]).reshape(-1)[0], -1.0, 1.0))
        reward = float(int(action["pick"]) == self.target) + 1.0 - abs(push - self.level)
        self.steps += 1
        return self._show(), reward, self.steps >= 8, False, {}


gym.register(id=ENV_ID, entry_point=PickAndPush)

# The game hosted in one worker process, small batches.
GAME = dict(game=f"gym:{ENV_ID}", num_games=16, actor_batch=16, train_batch=16, num_workers=1, progress=False)


def test_one_action_is_key_a_and_a_dict_action_one_key_per_entry():
    batch = {"a": torch.tensor([1, 2]), "pick": torch.tensor([0, 2]), "push": torch.tensor([[0.5], [-0.5]])}
    one = CategoricalFamily()
    both = DictFamily({"pick": CategoricalFamily(), "push": GaussianFamily()})
    assert torch.equal(actions_in(one, batch), batch["a"])
    assert action_columns(one, batch).keys() == {"a"}
    assert actions_in(both, batch).keys() == {"pick", "push"}
    assert torch.equal(actions_in(both, batch)["push"], batch["push"])
    assert action_replies(batch["a"]).keys() == {"a"}
    assert action_replies({"pick": batch["pick"], "push": batch["push"]}).keys() == {"pick", "push"}


def _probe_observations():
    """Every target at seven levels: ``[21, 4]``."""
    obs = np.zeros((21, 4), np.float32)
    obs[np.arange(21), np.arange(21) % 3] = 1.0
    obs[:, 3] = np.repeat(np.linspace(-0.9, 0.9, 7), 3)
    return obs


@pytest.mark.parametrize(("method", "lr"), [("ppo", 3e-3), ("actor_critic", 1e-2)])
def test_a_dict_action_is_learned_entry_by_entry_and_predict_returns_a_dict(tmp_path, method, lr):
    run = tmp_path / "run"
    # gamma 0: each step is its own bandit, so the push's advantage is not buried in the value's noise
    rlpytorch.train(rlpytorch.config(**GAME, method=method, num_frames=24000, gamma=0.0, entropy_coef=0.0,
                                     box_policy="tanh_gaussian", lr=lr, save_dir=str(run), eval_at_end=False))
    loader = GameLoader(game=f"gym:{ENV_ID}", num_workers=1)
    probe = loader.context(num_games=1, seed=0)
    model = load_model(run / "last.pt", loader.observation_spec(probe), loader.num_actions(probe))
    probe.stop()
    obs = _probe_observations()
    actions, state = model.predict(obs)
    assert state is None and actions.keys() == {"pick", "push"}
    assert actions["pick"].shape == (21,) and actions["push"].shape == (21, 1)
    assert np.array_equal(actions["pick"], np.arange(21) % 3)  # untrained: about a third right
    # untrained: about 0.5; trained, over 3 seeds: at most 0.07
    assert np.abs(actions["push"][:, 0] - obs[:, 3]).mean() < 0.15
    one, _ = model.predict(obs[4])
    assert int(one["pick"]) == 1 and one["push"].shape == (1,)


def test_previous_dict_action_given_to_predict_is_encoded_entry_by_entry(tmp_path):
    run = tmp_path / "run"
    rlpytorch.train(rlpytorch.config(**GAME, method="ppo", model="lstm", prev_action=True, prev_reward=True,
                                     num_frames=800, save_dir=str(run), eval_at_end=False))
    loader = GameLoader(game=f"gym:{ENV_ID}", num_workers=1)
    probe = loader.context(num_games=1, seed=0)
    model = load_model(run / "last.pt", loader.observation_spec(probe), loader.num_actions(probe))
    probe.stop()
    obs = _probe_observations()[:2]
    last = {"pick": np.array([2, 0]), "push": np.array([[0.25], [-0.5]], np.float32)}
    encoded = np.array([[0, 0, 1, 0.25], [1, 0, 0, -0.5]], np.float32)  # one-hot pick, then push
    given = {"s": obs, "prev_action": encoded, "prev_reward": np.array([1.0, 0.5], np.float32)}
    torch.manual_seed(3)
    expected, h_expected = model.predict(given, deterministic=False)
    torch.manual_seed(3)
    actions, h = model.predict(obs, prev_action=last, prev_reward=np.array([1.0, 0.5], np.float32),
                               deterministic=False)
    assert np.array_equal(actions["pick"], expected["pick"]) and np.allclose(actions["push"], expected["push"])
    assert np.allclose(h, h_expected)


@pytest.mark.parametrize(("method", "model", "needs"), [("dqn", "q", "one Discrete action"),
                                                         ("sac", "actor_q", "one Box action")])
def test_replay_methods_refuse_a_dict_action_by_name(method, model, needs):
    with pytest.raises(ValueError, match=needs):
        rlpytorch.train(rlpytorch.config(**GAME, method=method, model=model, num_frames=100, save_dir=""))
