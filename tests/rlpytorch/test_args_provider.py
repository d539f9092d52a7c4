"""The parser built from components: groups, strictness, config files, precedence."""

import json

import pytest

from rlpytorch.args_provider import Arg, ArgsError, ArgsProvider, Configurable, format_config


class Alpha(Configurable):
    args = (
        Arg("lr", 0.1, "learning rate"),
        Arg("layers", 2, "depth"),
        Arg("fast", False, "a switch"),
    )

    def __init__(self, lr=0.1, layers=2, fast=False, extra=None):
        self.lr, self.layers, self.fast, self.extra = lr, layers, fast, extra


class Beta(Configurable):
    args = (Arg("kind", "a", "a choice", choices=("a", "b")),)


class Clash(Configurable):
    args = (Arg("lr", 0.5, "same name as Alpha's"),)


def test_parser_groups_arguments_by_component():
    provider = ArgsProvider([Alpha, Beta])
    titles = [g.title for g in provider.parser._action_groups]
    assert "Alpha" in titles and "Beta" in titles
    assert provider.parse([]) == {"lr": 0.1, "layers": 2, "fast": False, "kind": "a"}


def test_command_line_values_are_typed_from_defaults():
    config = ArgsProvider([Alpha]).parse(["--lr", "0.5", "--layers", "3", "--fast"])
    assert config == {"lr": 0.5, "layers": 3, "fast": True}


def test_duplicate_argument_names_are_an_error():
    with pytest.raises(ArgsError, match="'lr' declared twice"):
        ArgsProvider([Alpha, Clash])


def test_unknown_command_line_option_is_an_error():
    with pytest.raises(SystemExit):
        ArgsProvider([Alpha]).parse(["--lrr", "1"])


def test_abbreviated_options_are_not_accepted():
    with pytest.raises(SystemExit):
        ArgsProvider([Alpha]).parse(["--lay", "1"])


def test_choices_are_enforced():
    with pytest.raises(SystemExit):
        ArgsProvider([Beta]).parse(["--kind", "c"])


def test_yaml_config_sets_values_and_command_line_overrides_it(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("lr: 0.25\nlayers: 4\nfast: true\n")
    config = ArgsProvider([Alpha]).parse(["--config", str(path), "--layers", "5"])
    assert config == {"lr": 0.25, "layers": 5, "fast": True}


def test_json_config_is_read_too(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"kind": "b"}))
    assert ArgsProvider([Beta]).parse(["--config", str(path)]) == {"kind": "b"}


def test_unknown_key_in_config_file_is_an_error(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("lr: 0.2\nlearning_rate: 0.3\n")
    with pytest.raises(ArgsError, match="unknown arguments \\['learning_rate'\\]"):
        ArgsProvider([Alpha]).parse(["--config", str(path)])


@pytest.mark.parametrize("text", ["layers: 2.5", "fast: 3", "lr: yes", "kind: c"])
def test_badly_typed_config_values_are_an_error(tmp_path, text):
    path = tmp_path / "run.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ArgsError):
        ArgsProvider([Alpha, Beta]).parse(["--config", str(path)])


def test_saved_defaults_sit_between_declared_defaults_and_config_file(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("layers: 7\n")
    config = ArgsProvider([Alpha]).parse(["--config", str(path)], defaults={"lr": 0.3, "layers": 6, "not_ours": 1})
    assert config == {"lr": 0.3, "layers": 7, "fast": False}


def test_from_config_takes_only_declared_keys_plus_extras():
    alpha = Alpha.from_config({"lr": 0.7, "kind": "b"}, extra="x")
    assert (alpha.lr, alpha.layers, alpha.extra) == (0.7, 2, "x")


def test_format_config_lists_every_value_sorted():
    assert format_config({"b": 1, "a": "x"}).splitlines() == ["a = 'x'", "b = 1"]


def test_an_alias_sets_the_same_argument():
    class Episodes(Configurable):
        args = (Arg("eval_episodes", 100, "episodes", aliases=("episodes",)),)

    provider = ArgsProvider([Episodes])
    assert provider.parse(["--episodes", "7"])["eval_episodes"] == 7
    assert provider.parse(["--eval_episodes", "8"])["eval_episodes"] == 8
    assert provider.parse([])["eval_episodes"] == 100
