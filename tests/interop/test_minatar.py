"""MinAtar (the `minatar` package) through the hosted path: its ids resolve
in the workers although the package only declares an entry point, and the
engine's rows equal the package's own environment step for step."""

import gymnasium as gym
import numpy as np

import elfpy
from elfpy.gym_host import game_seed
from elfpy.gym_presets import registered_spec


def test_minatar_ids_resolve_without_importing_the_package_first():
    spec = registered_spec("MinAtar/Breakout-v1")
    assert spec.entry_point == "minatar.gym:BaseEnv" and spec.kwargs["game"] == "breakout"


def test_hosted_breakout_matches_minatar_row_for_row_across_episodes():
    seed, num_games = 3, 2
    gc = elfpy.GameContext("gym:MinAtar/Breakout-v1", num_games=num_games, num_workers=2, num_threads=1, seed=seed,
                           deterministic=True)
    gc.add_tag("actor", batch_size=num_games, inputs=["s", "r", "terminal", "episode_return"], replies=["a"])
    spec = gc.spec()
    assert tuple(spec["s"].shape) == (10, 10, 4) and spec["a"].space.n == 3  # minimal action set
    references = [gym.make(registered_spec("MinAtar/Breakout-v1")) for _ in range(num_games)]
    expected = [(env.reset(seed=game_seed(seed, g))[0], 0.0, False) for g, env in enumerate(references)]
    returns = [0.0] * num_games
    rng = np.random.default_rng(0)
    episodes = 0
    with gc:
        for batch in gc:
            for row, game in enumerate(batch.game_ids):
                obs, reward, terminal = expected[game]
                np.testing.assert_array_equal(batch["s"][row], obs)
                assert batch["r"][row] == reward and batch["terminal"][row] == terminal
                if terminal:
                    assert batch["episode_return"][row] == returns[game]
                    returns[game] = 0.0
                    episodes += 1
            actions = rng.integers(0, 3, len(batch))
            for game, action in zip(batch.game_ids, actions, strict=True):
                obs, reward, terminated, truncated, _ = references[game].step(int(action))
                returns[game] += reward
                if terminated or truncated:
                    obs, _ = references[game].reset()
                expected[game] = (obs, reward, terminated or truncated)
            batch.reply({"a": actions})
            if episodes >= 4:
                break


def test_the_minatar_preset_gives_channels_first_float_planes_the_conv_encoder_reads():
    from rlpytorch.models.encoders import ConvEncoder, default_encoder, obs_spec

    gc = elfpy.GameContext("gym:MinAtar/SpaceInvaders-v1", num_games=2, num_workers=1, num_threads=1, seed=1,
                           deterministic=True, preset="minatar")
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
    spec = gc.spec()
    assert tuple(spec["s"].shape) == (6, 10, 10) and spec["s"].dtype == np.float32
    reference = gym.make(registered_spec("MinAtar/SpaceInvaders-v1"))
    first, _ = reference.reset(seed=game_seed(1, 0))
    with gc:
        batch = next(iter(gc))
        row = list(batch.game_ids).index(0)
        np.testing.assert_array_equal(batch["s"][row], first.transpose(2, 0, 1).astype(np.float32))
        batch.reply({"a": np.zeros(len(batch), np.int64)})
    encoder = default_encoder(obs_spec({"s": spec["s"]}), 32, 2, "relu", "16", 16)
    assert any(isinstance(part, ConvEncoder) for part in encoder.modules())
