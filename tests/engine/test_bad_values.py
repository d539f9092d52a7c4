"""Values the engine cannot take are refused by name, before anything starts."""

import pytest

import elfpy


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True])
def test_a_seed_outside_the_engines_range_is_refused_by_name(seed):
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*64 - 1, got"):
        elfpy.GameContext("cartpole", num_games=1, seed=seed)


@pytest.mark.parametrize("timeout_ms", [-1, 2.5])
def test_a_negative_or_fractional_timeout_is_refused_naming_the_tag(timeout_ms):
    gc = elfpy.GameContext("cartpole", num_games=2, num_threads=1)
    with pytest.raises(ValueError, match=r"tag 'actor': timeout_ms must be an integer >= 0"):
        gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"], timeout_ms=timeout_ms)
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"], timeout_ms=0)  # 0: deliver what is there
    gc.stop()


def test_a_fractional_integer_option_is_named_as_not_an_integer():
    with pytest.raises(ValueError, match="option 'max_steps' must be an integer, got '1.5'"):
        elfpy.GameContext("cartpole", num_games=1, max_steps=1.5)
