"""The parser built from components: groups, strictness, config files (and shipped configs by name),
precedence, and settings declared once (the dataclass field is the constructor's default and the parser's)."""

import ast
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from bombs import aliased_yaml, nested_shared_lists

import rlpytorch
from rlpytorch.core.args_provider import (
    SHIPPED_CONFIGS,
    Arg,
    ArgsError,
    ArgsProvider,
    Bounds,
    Configurable,
    above,
    at_least,
    format_config,
    part,
    read_config_file,
    setting,
    shipped_configs,
    short_repr,
)


@dataclass
class Alpha(Configurable):
    lr: float = setting(0.1, "learning rate")
    layers: int = setting(2, "depth")
    fast: bool = setting(False, "a switch")
    extra: object = None  # not a setting: an explicit value


@dataclass
class Beta(Configurable):
    kind: str = setting("a", "a choice", choices=("a", "b"))


@dataclass
class Clash(Configurable):
    lr: float = setting(0.5, "same name as Alpha's")


@dataclass
class AlphaPlus(Alpha):
    width: int = setting(8, "a setting the subclass adds")


@dataclass
class Composite(Configurable):
    gamma: float = setting(0.9, "its own setting")
    beta: Beta = part(Beta)


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
    alpha = Alpha.from_config({"lr": 0.7, "kind": "b", "extra": "not from the config"}, extra="x")
    assert (alpha.lr, alpha.layers, alpha.extra) == (0.7, 2, "x")


def test_a_setting_has_one_default_for_the_constructor_and_the_parser():
    assert Alpha().lr == 0.1 and Alpha.defaults() == {"lr": 0.1, "layers": 2, "fast": False}
    assert ArgsProvider([Alpha]).parse([])["lr"] == 0.1
    assert [arg.help for arg in Alpha.settings()] == ["learning rate", "depth", "a switch"]


def test_a_subclass_gets_its_own_group_after_its_base():
    assert list(AlphaPlus.arg_groups()) == ["Alpha", "AlphaPlus"]
    assert [arg.name for arg in AlphaPlus.arg_groups()["AlphaPlus"]] == ["width"]


def test_parts_are_built_from_their_own_settings_and_listed_as_groups():
    assert list(Composite.arg_groups()) == ["Composite", "Beta"]
    built = Composite.from_config({"gamma": 0.5, "kind": "b"})
    assert (built.gamma, built.beta) == (0.5, Beta("b"))
    assert Composite().beta == Beta("a")
    assert Composite.from_config({}, beta=Beta("b")).beta.kind == "b"


def test_setting_values_round_trip():
    alpha = Alpha(lr=0.3, fast=True)
    assert Alpha(**alpha.setting_values()) == alpha


def test_format_config_lists_every_value_sorted():
    assert format_config({"b": 1, "a": "x"}).splitlines() == ["a = 'x'", "b = 1"]


def test_an_alias_sets_the_same_argument():
    @dataclass
    class Episodes(Configurable):
        eval_episodes: int = setting(100, "episodes", aliases=("episodes",))

    provider = ArgsProvider([Episodes])
    assert provider.parse(["--episodes", "7"])["eval_episodes"] == 7
    assert provider.parse(["--eval_episodes", "8"])["eval_episodes"] == 8
    assert provider.parse([])["eval_episodes"] == 100


def test_a_shipped_config_loads_by_name_from_any_folder(tmp_path, monkeypatch):
    from rlpytorch import training

    monkeypatch.chdir(tmp_path)  # an installed package: no examples folder beside the run
    assert "cartpole_fast" in shipped_configs() and "go9" in shipped_configs()
    by_name = ArgsProvider(training.components("actor_critic")).parse(["--config", "cartpole_fast"])
    shipped = yaml.safe_load((SHIPPED_CONFIGS / "cartpole_fast.yaml").read_text())
    assert {name: by_name[name] for name in shipped} == shipped


def test_an_existing_file_wins_over_the_shipped_config_of_that_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cartpole_fast").write_text("lr: 0.25\n")
    assert ArgsProvider([Alpha]).parse(["--config", "cartpole_fast"])["lr"] == 0.25


def test_an_unknown_config_name_is_one_error_listing_the_shipped_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ArgsError, match=r"^--config cartpole_fats: no such file, nor a shipped config .*cartpole_fast"):
        ArgsProvider([Alpha]).parse(["--config", "cartpole_fats"])


@pytest.mark.parametrize("missing", ["configs/cartpole_fast.yaml", "cartpole_fast.yaml"])
def test_a_missing_path_is_reported_as_that_path_not_looked_up_by_name(tmp_path, monkeypatch, missing):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ArgsError, match=f"^--config {missing}: No such file"):
        ArgsProvider([Alpha]).parse(["--config", missing])


@pytest.mark.parametrize("name", shipped_configs())
def test_every_shipped_config_is_accepted_by_its_entry_point(name):
    from rlpytorch import training

    argv = ["--config", name]
    provider = ArgsProvider(training.components(training.chosen_method(argv)))  # go9's method is alphazero
    config = provider.parse(argv)
    assert {key: config[key] for key in read_config_file(name)} == provider.load_config(name)


@dataclass
class Bounded(Configurable):
    frames: int = setting(100, "frames to run", bounds=at_least(1))
    rate: float = setting(0.5, "a rate", bounds=Bounds(0, 1, low_open=True))
    name: str = setting("a", "checked by a function", check=lambda value: None if value.isalpha() else int("x"))


def test_a_config_of_aliases_is_refused_in_one_short_line_naming_where(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(aliased_yaml(depth=6))  # 531441 elements written out: a long message before the refusal
    with pytest.raises(ArgsError) as refused:
        ArgsProvider([Alpha]).parse(["--config", str(path)])
    assert str(refused.value) == f"{path}, line 3, column 8: aliases are not allowed in configs (found *a0)"


def test_a_config_nested_past_the_recursion_limit_is_one_error(tmp_path):
    for suffix, text in ((".yaml", "lr: " + "[" * 100_000), (".json", '{"lr": ' + "[" * 100_000)):
        path = tmp_path / f"deep{suffix}"
        path.write_text(text)
        with pytest.raises(ArgsError, match=f"^{path}: not valid (YAML|JSON): nested too deeply$"):
            read_config_file(path)


def test_a_config_that_is_not_text_is_one_error(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"lr: \xff\xfe\n")
    with pytest.raises(ArgsError, match="not a text file"):
        read_config_file(path)


@pytest.mark.parametrize("value", [[1, 2], {"a": 1}, nested_shared_lists(depth=6)])
def test_a_list_or_mapping_is_refused_as_a_settings_value_quoting_a_prefix(value):
    with pytest.raises(ArgsError) as refused:
        Arg("lr", 0.1, "learning rate").convert(value)
    message = str(refused.value)
    assert message.startswith(f"lr: expected a plain value, got a {type(value).__name__} ") and len(message) < 120


@pytest.mark.parametrize("value, shown", [
    ("z" * 5000, "'" + "z" * 60 + "'..."),
    (10**5000, "an integer of 16610 bits"),
    (nested_shared_lists(depth=30), "[[[[...], [...], [...], [...], [...], [...], ...], [[...], [..."),
], ids=["a long string", "a huge integer", "shared lists"])
def test_short_repr_quotes_a_prefix_without_writing_out_the_value(value, shown):
    assert short_repr(value) == shown


def test_a_long_unknown_argument_is_quoted_by_its_prefix_on_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        ArgsProvider([Alpha], prog="prog").parse(["--nope", "n" * 5000])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == f"prog: error: unrecognized arguments: --nope {'n' * 60}...\n"


@pytest.mark.parametrize("argv, refused", [
    (["--frames", "0"], "argument --frames: must be >= 1, got 0"),
    (["--frames", "-5"], "argument --frames: must be >= 1, got -5"),
    (["--rate", "0"], "argument --rate: must be > 0 and <= 1, got 0.0"),
    (["--rate", "nan"], "argument --rate: must be > 0 and <= 1, got nan"),
    (["--frames", "9" * 5000], "argument --frames: cannot read '" + "9" * 60 + "'... as int"),
    (["--name", "a1"], "argument --name: 'a1': invalid literal for int() with base 10: 'x'"),
])
def test_a_command_line_value_out_of_bounds_is_one_line_naming_the_option(argv, refused, capsys):
    with pytest.raises(SystemExit) as exit_:
        ArgsProvider([Bounded], prog="prog").parse(argv)
    assert exit_.value.code == 2 and capsys.readouterr().err == f"prog: error: {refused}\n"


def test_a_value_out_of_bounds_is_refused_from_a_config_file_python_and_a_checkpoint(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("frames: 0\n")
    provider = ArgsProvider([Bounded])
    with pytest.raises(ArgsError, match=f"^{path}: frames: must be >= 1, got 0$"):
        provider.parse(["--config", str(path)])
    with pytest.raises(ArgsError, match=r"^rate: must be > 0 and <= 1, got 1.5$"):
        Arg.of_field(next(f for f in dataclasses.fields(Bounded) if f.name == "rate")).convert(1.5)
    with pytest.raises(ArgsError, match=r"^the checkpoint's settings: frames: must be >= 1, got -5$"):
        provider.parse([], defaults={"frames": -5})
    with pytest.raises(ArgsError, match=r"^the checkpoint's settings: frames: expected a plain value, got a list"):
        provider.parse([], defaults={"frames": nested_shared_lists(depth=6)})
    assert provider.parse(["--frames", "1", "--rate", "1"]) == {"frames": 1, "rate": 1.0, "name": "a"}


def test_a_default_outside_its_own_bounds_is_an_error_where_it_is_declared():
    with pytest.raises(ArgsError, match="default 0 is not >= 1"):
        setting(0, "frames", bounds=at_least(1))


@pytest.mark.parametrize("bounds, text", [(at_least(1), ">= 1"), (above(0), "> 0"), (Bounds(0, 1), "from 0 to 1"),
                                          (at_least(1, 2**31 - 1), "from 1 to 2147483647"),
                                          (Bounds(0, 1, low_open=True, high_open=True), "> 0 and < 1")])
def test_bounds_say_what_they_allow(bounds, text):
    assert str(bounds) == text
    assert float("nan") not in bounds


def test_the_settings_several_components_share_are_declared_in_one_module():
    package = Path(rlpytorch.__file__).resolve().parent
    declaring = {path.relative_to(package).as_posix() for path in package.rglob("*.py")
                 if any(isinstance(node, ast.FunctionDef) and node.name.endswith("_setting")
                        for node in ast.parse(path.read_text()).body)}
    assert declaring == {"core/settings.py"}
