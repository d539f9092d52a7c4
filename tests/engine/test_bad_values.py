"""Values the engine cannot take are refused by name, before anything starts."""

import pytest

import elfpy


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True])
def test_a_seed_outside_the_engines_range_is_refused_by_name(seed):
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*64 - 1, got"):
        elfpy.GameContext("cartpole", num_games=1, seed=seed)


@pytest.mark.parametrize("timeout_ms", [-1, 2.5, 2**31])
def test_a_negative_or_fractional_timeout_is_refused_naming_the_tag(timeout_ms):
    gc = elfpy.GameContext("cartpole", num_games=2, num_threads=1)
    with pytest.raises(ValueError, match=r"tag 'actor': timeout_ms must be an integer from 0 to 2\*\*31 - 1"):
        gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"], timeout_ms=timeout_ms)
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"], timeout_ms=0)  # 0: deliver what is there
    gc.stop()


def test_a_fractional_integer_option_is_named_as_not_an_integer():
    with pytest.raises(ValueError, match="option 'max_steps' must be an integer, got '1.5'"):
        elfpy.GameContext("cartpole", num_games=1, max_steps=1.5)


@pytest.mark.parametrize("name, value", [
    ("num_games", 3_000_000_000), ("num_games", 0), ("num_games", 2.0), ("num_games", "8"), ("num_games", True),
    ("num_threads", 2**31), ("num_threads", 0), ("num_workers", 0),
])
def test_a_count_the_engine_cannot_hold_is_refused_naming_the_argument(name, value):
    arguments = {"num_games": 2, "num_threads": 1, name: value}
    with pytest.raises(ValueError, match=rf"^{name} must be an integer from 1 to 2\*\*31 - 1, got "):
        elfpy.GameContext("cartpole", **arguments)


@pytest.mark.parametrize("name, value", [("batch_size", 2**31), ("batch_size", 0), ("T", 2**40), ("T", 0),
                                         ("min_batch", 2**31), ("min_batch", 1.0)])
def test_a_tag_size_the_engine_cannot_hold_is_refused_naming_the_tag_and_argument(name, value):
    gc = elfpy.GameContext("cartpole", num_games=2, num_threads=1)
    arguments = {"batch_size": 2, "inputs": ["s"], name: value}
    with pytest.raises(ValueError, match=rf"^tag 'train': {name} must be an integer from 1 to 2\*\*31 - 1, got "):
        gc.add_tag("train", **arguments)
    gc.add_tag("train", batch_size=2, inputs=["s"], T=3)  # nothing half-added by the refusals
    assert gc.tag_info("train").T == 3
    gc.stop()


def test_more_seats_than_the_engine_can_number_are_refused_naming_num_games():
    refused = (r"^num_games must be at most 268435455 for 'go_mcts' \(2\*\*31 - 1 seats in all, 8 a game\), "
               r"got 300000000$")
    with pytest.raises(ValueError, match=refused):
        elfpy.GameContext("go_mcts", num_games=300_000_000, num_threads=1)
    elfpy.GameContext("go_mcts", num_games=2, num_threads=1).stop()


def test_a_seat_the_engine_cannot_hold_is_refused_naming_the_tag():
    gc = elfpy.GameContext("cartpole", num_games=2, num_threads=1)
    refused = r"^tag 'train': a seat must be an integer from 0 to 2\*\*31 - 1, got 4294967296$"
    with pytest.raises(ValueError, match=refused):
        gc.add_tag("train", batch_size=2, inputs=["s"], seats=[2**32])
    gc.stop()


def test_a_refusal_quotes_a_long_value_by_its_prefix():
    with pytest.raises(ValueError) as refused:
        elfpy.GameContext("cartpole", num_games="8" * 10_000)
    assert len(str(refused.value)) < 120


LONG = "x" * 10_000


@pytest.mark.parametrize("make, named", [
    (lambda: elfpy.GameContext(LONG, num_games=2), "unknown game 'xxx"),
    (lambda: elfpy.GameContext("cartpole", num_games=2, max_steps=LONG), "option 'max_steps' must be an integer"),
    (lambda: elfpy.GameContext("cartpole", num_games=2, **{LONG: 1}), "unknown game option 'xxx"),
    (lambda: elfpy.GameContext("cartpole", num_games=2).add_tag(LONG, batch_size=1, inputs=["s"]),
     "a tag's name must be 1 to 64 characters"),
    (lambda: elfpy.GameContext("cartpole", num_games=2).add_tag("a", batch_size=1, inputs=[LONG]),
     "unknown key 'xxx"),
])
def test_the_engines_messages_quote_a_users_long_text_by_its_prefix(make, named):
    with pytest.raises(ValueError, match=named) as refused:
        make()
    assert "x" * 60 + "..." in str(refused.value) and "x" * 61 not in str(refused.value)


@pytest.mark.parametrize("shape, refused", [
    ([-1], r"key 'V': a shape's size must be an integer from 0 to 2\*\*31 - 1, got -1"),
    ([1.5], r"key 'V': a shape's size must be an integer from 0 to 2\*\*31 - 1, got 1.5"),
    ([2**63], r"key 'V': a shape's size must be an integer from 0 to 2\*\*31 - 1, got 9223372036854775808"),
    ([2**20, 2**20], r"key 'V': shape \(1048576, 1048576\) holds more than 2\*\*31 - 1 elements a row"),
])
def test_a_key_shape_the_engine_cannot_hold_is_refused_naming_the_key(shape, refused):
    gc = elfpy.GameContext("cartpole", num_games=2, num_threads=1)
    with pytest.raises(ValueError, match=f"^{refused}$"):
        gc.add_key("V", "float32", shape, "a value")
    gc.add_key("V", "float32", [0], "a value")  # nothing half-added by the refusal
    gc.stop()
