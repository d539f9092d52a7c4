"""rlpytorch.train's choice of method: only its arguments are offered, with its suggested defaults."""

import pytest

from rlpytorch import train
from rlpytorch.args_provider import ArgsProvider
from rlpytorch.methods import PPO


def test_method_comes_from_the_command_line_then_the_config_file(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("method: ppo\nclip_eps: 0.1\n")
    assert train.chosen_method([]) == "actor_critic"
    assert train.chosen_method(["--config", str(config)]) == "ppo"
    assert train.chosen_method(["--config", str(config), "--method", "actor_critic"]) == "actor_critic"


def test_ppo_run_offers_ppo_arguments_and_its_suggested_window(tmp_path):
    provider = ArgsProvider(train.components("ppo"))
    config = provider.parse(["--clip_eps", "0.1"], defaults=PPO.run_defaults)
    assert config["clip_eps"] == 0.1 and config["T"] == 17 and config["returns"] == "gae"
    assert provider.parse(["--T", "9"], defaults=PPO.run_defaults)["T"] == 9
    with pytest.raises(SystemExit):  # an ActorCritic-only argument is unknown to a PPO run
        provider.parse(["--ratio_clamp", "2"])
