"""Settings declared once by the components that use them, gathered into one parser.

A configurable component is a dataclass: each setting is one field declared
with ``setting(default, help)`` (optionally choices, aliases, a type), which is
at once the constructor's default, the parser's default and its help text.
Fields without ``setting`` are the component's collaborators and explicit
values (a model, a seed, a folder): the code that assembles a run passes them.
A field declared with ``part(Class)`` is a composed part (e.g. ActorCritic's
``PolicyGradient``), built with its own defaults or from the configuration. ::

    @dataclass(eq=False)
    class Sampler(Configurable):
        sampler: str = setting("multinomial", "how actions are drawn from pi", choices=SAMPLERS)
        epsilon: float = setting(0.05, "exploration rate of epsilon_greedy")
        seed: int | None = None

A run names the components it uses; ``ArgsProvider`` builds one ``argparse``
parser from their settings, one argument group per component (and per part),
so ``--help`` reads like the run. Rules, so that a typo never goes unnoticed:

- two components declaring the same name is an error when the parser is built;
- an unknown command-line option or config-file key is an error;
- a config file (YAML or JSON, ``--config path``) sets values, and the command
  line overrides the file; ``--config NAME`` (no folder, no suffix) names one of
  the configs shipped in ``rlpytorch/configs`` (``--config cartpole_fast``), so an
  installed package runs its examples from any folder; a file that exists wins.

The parsed result is a plain ``dict`` (the effective configuration): it is
printed at start and saved with the run. ``Component.from_config`` builds a
component from it, taking only the settings the component (and its parts)
declared; everything else it needs is passed explicitly.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from typing_extensions import Self

__all__ = [
    "Arg",
    "ArgsError",
    "ArgsProvider",
    "Configurable",
    "HelpFormatter",
    "convert_from",
    "format_config",
    "part",
    "read_config_file",
    "resolve_config",
    "setting",
    "shipped_configs",
]

_SETTING = "rlpytorch.setting"  # field metadata: the setting's help, type, choices and aliases
_PART = "rlpytorch.part"  # field metadata: a composed Configurable part
SHIPPED_CONFIGS = Path(__file__).resolve().parents[1] / "configs"  # package data: the example configs, loaded by name


class ArgsError(ValueError):
    """A duplicate, unknown or badly typed argument."""


def setting(
    default: Any,
    help: str,
    *,
    choices: Sequence[Any] | None = None,
    aliases: Sequence[str] = (),
    type: Callable[[str], Any] | None = None,
) -> Any:
    """A dataclass field that is a setting: its default and help, stated here only.

    The type is taken from the default when not given (``bool`` defaults become
    ``--name/--no-name`` switches); ``default=None`` needs an explicit type.
    ``aliases`` are other command-line names (e.g. ``("episodes",)``).
    """
    info = {"help": help, "choices": tuple(choices) if choices is not None else None,
            "aliases": tuple(aliases), "type": type}
    return dataclasses.field(default=default, metadata={_SETTING: info})


def part(cls: type[Configurable]) -> Any:
    """A dataclass field holding a composed part, by default ``cls()`` with its own defaults."""
    return dataclasses.field(default_factory=cls, metadata={_PART: cls})


@dataclass(frozen=True)
class Arg:
    """One setting as the parser sees it: name, default, help, type, choices, aliases."""

    name: str
    default: Any
    help: str
    type: Callable[[str], Any] | None = None
    choices: Sequence[Any] | None = None
    aliases: Sequence[str] = ()

    @classmethod
    def of_field(cls, field: dataclasses.Field) -> Arg:
        """The ``Arg`` of a field declared with ``setting``."""
        return cls(field.name, field.default, **field.metadata[_SETTING])

    @property
    def value_type(self) -> Callable[[str], Any]:
        """The converter applied to command-line strings and config values."""
        if self.type is not None:
            return self.type
        if self.default is None:
            raise ArgsError(f"argument {self.name!r} has default None and no type")
        return type(self.default)

    def convert(self, value: Any) -> Any:
        """Convert a config-file value, refusing values of the wrong kind."""
        kind = self.value_type
        if value is None:
            return None
        if kind is bool:
            if not isinstance(value, bool):
                raise ArgsError(f"{self.name}: expected true/false, got {value!r}")
            return value
        if kind in (int, float) and isinstance(value, bool):
            raise ArgsError(f"{self.name}: expected {kind.__name__}, got {value!r}")
        try:
            converted = kind(value)
        except (TypeError, ValueError) as exc:
            raise ArgsError(f"{self.name}: cannot read {value!r}: {exc}") from exc
        if kind is int and isinstance(value, float) and value != converted:
            raise ArgsError(f"{self.name}: expected an integer, got {value!r}")
        if self.choices is not None and converted not in self.choices:
            raise ArgsError(f"{self.name}: {converted!r} is not one of {list(self.choices)}")
        return converted


class Configurable:
    """Mixin for dataclass components whose settings are declared with ``setting``."""

    @classmethod
    def settings(cls) -> tuple[Arg, ...]:
        """Every setting of this class (inherited ones included), in declaration order."""
        return tuple(Arg.of_field(f) for f in dataclasses.fields(cls) if _SETTING in f.metadata)

    @classmethod
    def parts(cls) -> dict[str, type[Configurable]]:
        """The composed parts: field name -> part class."""
        return {f.name: f.metadata[_PART] for f in dataclasses.fields(cls) if _PART in f.metadata}

    @classmethod
    def arg_groups(cls) -> dict[str, tuple[Arg, ...]]:
        """Argument groups for the parser: one per class of the hierarchy that
        declares settings (a base class's first), then the parts' groups."""
        groups: dict[str, tuple[Arg, ...]] = {}
        for klass in reversed(cls.__mro__):
            if dataclasses.is_dataclass(klass) and issubclass(klass, Configurable):
                own = klass.__dict__.get("__annotations__", {})
                args = tuple(arg for arg in klass.settings() if arg.name in own)
                if args:
                    groups[klass.__name__] = args
        for part_cls in cls.parts().values():
            groups.update(part_cls.arg_groups())
        return groups

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The declared settings (of all groups) with their default values."""
        return {arg.name: arg.default for args in cls.arg_groups().values() for arg in args}

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **extra: Any) -> Self:
        """Build the component from its settings in ``config`` (missing ones take
        their defaults), its parts likewise, and the explicit values ``extra``."""
        own = {arg.name: config[arg.name] for arg in cls.settings() if arg.name in config}
        parts = {name: part_cls.from_config(config) for name, part_cls in cls.parts().items() if name not in extra}
        return cls(**own, **parts, **extra)

    def setting_values(self) -> dict[str, Any]:
        """This instance's settings, by name (to build an equal one elsewhere)."""
        return {arg.name: getattr(self, arg.name) for arg in self.settings()}


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """``--help``: the description as written (its paragraphs and command lines
    keep their lines), and each option's default after its help, unless empty."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in ("", None):  # "(default: )" says nothing; the help says what empty means
            return action.help
        return super()._get_help_string(action)


class ArgsProvider:
    """One parser for the arguments of all the components a run uses.

    ``components`` are ``Configurable`` classes; each contributes its
    ``arg_groups()`` in order, so ``--help`` lists them as the run uses them;
    ``epilog`` ends the help.
    """

    def __init__(
        self, components: Iterable[type[Configurable]], description: str | None = None, prog: str | None = None,
        epilog: str | None = None,
    ) -> None:
        self.groups: dict[str, tuple[Arg, ...]] = {}
        for component in components:
            for title, args in component.arg_groups().items():
                if title in self.groups:
                    raise ArgsError(f"component {title!r} listed twice")
                self.groups[title] = tuple(args)
        self.args: dict[str, Arg] = {}
        for title, args in self.groups.items():
            for arg in args:
                if arg.name in self.args or arg.name == "config":
                    raise ArgsError(f"argument {arg.name!r} declared twice (again in {title!r})")
                self.args[arg.name] = arg
        self.parser = self._build_parser(description, prog, epilog)

    def _build_parser(self, description: str | None, prog: str | None, epilog: str | None) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(
            prog=prog,
            description=description,
            epilog=epilog,
            formatter_class=HelpFormatter,
            allow_abbrev=False,
        )
        parser.add_argument("--config", type=Path, help="YAML or JSON file of argument values, or the name of a "
                            f"shipped config ({', '.join(shipped_configs())})")
        for title, args in self.groups.items():
            group = parser.add_argument_group(title)
            for arg in args:
                _add_argument(group, arg)
        return parser

    def parse(self, argv: Sequence[str] | None = None, defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Parse ``argv`` (default: ``sys.argv[1:]``).

        Precedence, lowest first: declared defaults, ``defaults`` (e.g. the
        arguments saved in a checkpoint; keys not declared here are ignored),
        the ``--config`` file, the command line.
        """
        if defaults:
            self.parser.set_defaults(**{k: v for k, v in defaults.items() if k in self.args})
        pre, _ = _config_only_parser().parse_known_args(argv)
        if pre.config is not None:
            self.parser.set_defaults(**self.load_config(pre.config))
        namespace = self.parser.parse_args(argv)
        config = vars(namespace)
        config.pop("config")
        return config

    def load_config(self, path: str | Path) -> dict[str, Any]:
        """Read a YAML or JSON file (or a shipped config's name), checking every key against the declared args."""
        path = resolve_config(path)
        values = read_config_file(path)
        unknown = sorted(set(values) - set(self.args))
        if unknown:
            raise ArgsError(f"{path}: unknown arguments {unknown}")
        return {name: convert_from(path, self.args[name], value) for name, value in values.items()}


def convert_from(source: str | Path, arg: Arg, value: Any) -> Any:
    """``arg.convert(value)``, an error naming ``source`` (the file the value came from)."""
    try:
        return arg.convert(value)
    except ArgsError as error:
        raise ArgsError(f"{source}: {error}") from None


def shipped_configs() -> list[str]:
    """The names ``--config`` accepts for the configs shipped with rlpytorch, sorted."""
    return sorted(path.stem for path in SHIPPED_CONFIGS.glob("*.yaml"))


def resolve_config(path_or_name: str | Path) -> Path:
    """The file ``--config path_or_name`` reads: the file if it exists, else the
    shipped config of that name (a bare name: no folder, no suffix)."""
    path = Path(path_or_name)
    if path.exists() or len(path.parts) != 1 or path.suffix:
        return path  # a missing path is reported by read_config_file, naming it
    shipped = SHIPPED_CONFIGS / f"{path}.yaml"
    if not shipped.is_file():
        raise ArgsError(f"--config {path}: no such file, nor a shipped config of that name "
                        f"(shipped: {', '.join(shipped_configs())})")
    return shipped


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The mapping in a YAML or JSON file (or a shipped config's name), unchecked
    (``ArgsProvider.load_config`` checks it)."""
    path = resolve_config(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ArgsError(f"--config {path}: {error.strerror or error}") from None
    try:
        values = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except json.JSONDecodeError as error:
        raise ArgsError(f"{path}, line {error.lineno}, column {error.colno}: not valid JSON: {error.msg}") from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        raise ArgsError(f"{path}, line {mark.line + 1}, column {mark.column + 1}: not valid YAML: "
                        f"{error.problem}") from None
    if not isinstance(values, dict):
        raise ArgsError(f"{path}: expected a mapping of argument names to values")
    return values


def _add_argument(group: argparse._ArgumentGroup, arg: Arg) -> None:
    flags = [f"--{name}" for name in (arg.name, *arg.aliases)]
    if arg.value_type is bool:
        group.add_argument(
            *flags,
            action=argparse.BooleanOptionalAction,
            default=arg.default,
            help=arg.help,
        )
    else:
        group.add_argument(
            *flags,
            dest=arg.name,
            type=arg.value_type,
            default=arg.default,
            choices=arg.choices,
            help=arg.help,
        )


def _config_only_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--config", type=Path)
    return parser


def format_config(config: Mapping[str, Any]) -> str:
    """The effective configuration, one ``name = value`` per line, sorted."""
    width = max((len(name) for name in config), default=0)
    return "\n".join(f"{name:<{width}} = {config[name]!r}" for name in sorted(config))
