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
- a value is read the same way from the command line, a config file, a
  checkpoint's stored settings and Python: of the setting's type, a plain value
  (no list or mapping), one of its ``choices``, within its ``bounds``
  (``setting(64, "games run at once", bounds=at_least(1))``); an error names the
  setting and quotes at most a short prefix of the value (``short_repr``);
- a YAML config may not hold aliases (``rlpytorch.core.plain_yaml``);
- a config file (YAML or JSON, ``--config path``) sets values, and the command
  line overrides the file; ``--config NAME`` (no folder, no suffix) names one of
  the configs shipped in ``rlpytorch/configs`` (``--config cartpole_fast``), so an
  installed package runs its examples from any folder; a file that exists wins.

The parser's result is a plain ``dict``; ``ArgsProvider.settings_class``
makes the dataclass of the same settings (one typed field each), which is
what a run carries from the command line to its components
(``rlpytorch.config`` builds one). ``Component.from_config`` builds a
component from it, taking only the settings the component (and its parts)
declared; everything else it needs is passed explicitly. ``settings_record``
is its plain form, as files and checkpoints hold it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import numbers
import reprlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import yaml
from typing_extensions import Self

from .plain_yaml import AliasNotAllowed, load_yaml

__all__ = [
    "Arg",
    "ArgsError",
    "ArgsProvider",
    "Bounds",
    "Configurable",
    "HelpFormatter",
    "OneLineParser",
    "above",
    "at_least",
    "convert_from",
    "format_config",
    "part",
    "read_config_file",
    "resolve_config",
    "setting",
    "settings_record",
    "shipped_configs",
    "short_repr",
    "short_text",
]

_SETTING = "rlpytorch.setting"  # field metadata: the setting's help, type, choices, aliases, bounds and check
_PART = "rlpytorch.part"  # field metadata: a composed Configurable part
_NOT_A_SETTING = "rlpytorch.not_a_setting"  # field metadata: a settings dataclass's extra field (not recorded)
SHIPPED_CONFIGS = Path(__file__).resolve().parents[1] / "configs"  # package data: the example configs, loaded by name


class ArgsError(ValueError):
    """A duplicate, unknown or badly typed argument."""


QUOTED_PREFIX = 60  # characters of a value an error message quotes at most


class _ShortRepr(reprlib.Repr):
    """``repr`` cut short: a string's first characters, a few elements of a
    container, a few levels deep, so that quoting a huge value costs little."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxother = QUOTED_PREFIX

    def repr_str(self, value: str, level: int) -> str:
        return repr(value[:QUOTED_PREFIX]) + ("..." if len(value) > QUOTED_PREFIX else "")

    def repr_int(self, value: int, level: int) -> str:
        if value.bit_length() > 4 * QUOTED_PREFIX:  # its digits: more than a prefix, and slow to write
            return f"an integer of {value.bit_length()} bits"
        return super().repr_int(value, level)


_short = _ShortRepr()


def short_repr(value: Any) -> str:
    """``repr(value)`` for an error message: at most about ``QUOTED_PREFIX``
    characters, then "...", computed without writing out the whole value."""
    text = _short.repr(value)
    # (a string's own quotes and "..." may pass the prefix by 5 characters)
    return text if len(text) <= QUOTED_PREFIX + 5 else text[:QUOTED_PREFIX] + "..."


def short_text(text: str) -> str:
    """``text`` itself, unquoted, cut after ``QUOTED_PREFIX`` characters (then "...")."""
    return text if len(text) <= QUOTED_PREFIX else text[:QUOTED_PREFIX] + "..."


@dataclass(frozen=True)
class Bounds:
    """The numbers a setting allows: from ``low`` to ``high``, an end included
    unless it is ``*_open``. NaN is within no bounds."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, value: float) -> bool:
        above_low = value > self.low if self.low_open else value >= self.low
        below_high = value < self.high if self.high_open else value <= self.high
        return bool(above_low and below_high)

    def __str__(self) -> str:
        low, high = _number(self.low), _number(self.high)
        if self.low > -math.inf and self.high < math.inf and not self.low_open and not self.high_open:
            return f"from {low} to {high}"
        ends = [f"{'>' if self.low_open else '>='} {low}" if self.low > -math.inf else "",
                f"{'<' if self.high_open else '<='} {high}" if self.high < math.inf else ""]
        return " and ".join(end for end in ends if end)


def _number(value: float) -> str:
    """An integer's digits (2147483647, not 2.14748e+09), else the shortest form."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def at_least(low: float, high: float = math.inf) -> Bounds:
    """``low`` or more (up to ``high``)."""
    return Bounds(low, high)


def above(low: float) -> Bounds:
    """More than ``low``."""
    return Bounds(low, low_open=True)


def setting(
    default: Any,
    help: str,
    *,
    choices: Sequence[Any] | None = None,
    aliases: Sequence[str] = (),
    type: Callable[[str], Any] | None = None,
    bounds: Bounds | None = None,
    check: Callable[[Any], None] | None = None,
) -> Any:
    """A dataclass field that is a setting: its default and help, stated here only.

    The type is taken from the default when not given (``bool`` defaults become
    ``--name/--no-name`` switches); ``default=None`` needs an explicit type.
    ``aliases`` are other command-line names (e.g. ``("episodes",)``);
    ``bounds`` the numbers it allows (its default among them); ``check`` a
    function that raises ValueError, saying why, for a value it refuses (e.g.
    ``rlpytorch.core.devices.device_name``).
    """
    if bounds is not None and default is not None and default not in bounds:
        raise ArgsError(f"default {default!r} is not {bounds}")
    info = {"help": help, "choices": tuple(choices) if choices is not None else None,
            "aliases": tuple(aliases), "type": type, "bounds": bounds, "check": check}
    return dataclasses.field(default=default, metadata={_SETTING: info})


def part(cls: type[Configurable]) -> Any:
    """A dataclass field holding a composed part, by default ``cls()`` with its own defaults."""
    return dataclasses.field(default_factory=cls, metadata={_PART: cls})


@dataclass(frozen=True)
class Arg:
    """One setting as the parser sees it: name, default, help, type, choices, aliases, bounds, check."""

    name: str
    default: Any
    help: str
    type: Callable[[str], Any] | None = None
    choices: Sequence[Any] | None = None
    aliases: Sequence[str] = ()
    bounds: Bounds | None = None
    check: Callable[[Any], None] | None = None

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
        """Convert a config-file (or stored, or Python) value, refusing values
        of the wrong kind, outside the choices or the bounds."""
        try:
            return self._converted(value)
        except ArgsError as error:
            raise ArgsError(f"{self.name}: {error}") from None

    def read(self, text: str) -> Any:
        """Convert a command-line value (argparse's ``type``): an error is
        argparse's, which names the option."""
        try:
            return self._converted(text)
        except ArgsError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    def _converted(self, value: Any) -> Any:
        kind = self.value_type
        if value is None:
            return None
        if not isinstance(value, (str, numbers.Real)):  # a list or mapping: no setting holds one
            raise ArgsError(f"expected a plain value, got {_kind_of(value)} {short_repr(value)}")
        if kind is bool:
            if not isinstance(value, bool):
                raise ArgsError(f"expected true/false, got {short_repr(value)}")
            return value
        if kind in (int, float) and isinstance(value, bool):
            raise ArgsError(f"expected {kind.__name__}, got {short_repr(value)}")
        try:
            converted = kind(value)
        except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: int(inf)
            reason = f": {exc}" if kind not in (int, float) else ""  # int's own words repeat the whole value
            raise ArgsError(f"cannot read {short_repr(value)} as {getattr(kind, '__name__', kind)}{reason}") from exc
        if kind is int and isinstance(value, float) and value != converted:
            raise ArgsError(f"expected an integer, got {short_repr(value)}")
        if self.choices is not None and converted not in self.choices:
            raise ArgsError(f"{short_repr(converted)} is not one of {list(self.choices)}")
        if self.bounds is not None and converted not in self.bounds:
            raise ArgsError(f"must be {self.bounds}, got {short_repr(converted)}")
        if self.check is not None:
            try:
                self.check(converted)
            except ValueError as error:
                raise ArgsError(f"{short_repr(converted)}: {error}") from None
        return converted


def _kind_of(value: Any) -> str:
    """'a list', 'a dict', ...: what a value is, for a message."""
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


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
    def from_config(cls, config: Any, **extra: Any) -> Self:
        """Build the component from its settings in ``config`` (a run's settings
        dataclass, or a mapping of some settings; missing ones take their
        defaults), its parts likewise, and the explicit values ``extra``, which
        win over ``config``'s."""
        values = _values_of(config)
        own = {arg.name: values[arg.name] for arg in cls.settings() if arg.name in values and arg.name not in extra}
        parts = {name: part_cls.from_config(config) for name, part_cls in cls.parts().items() if name not in extra}
        return cls(**own, **parts, **extra)

    def check_parts(self) -> None:
        """``TypeError`` unless each part field holds an instance of its declared class
        (a part given in the wrong place, or a setting's value where a part goes)."""
        for name, part_cls in self.parts().items():
            value = getattr(self, name)
            if not isinstance(value, part_cls):
                raise TypeError(f"{type(self).__name__}: {name} must be a {part_cls.__name__}, "
                                f"got {short_repr(value)}")

    def setting_values(self) -> dict[str, Any]:
        """This instance's settings, by name (to build an equal one elsewhere)."""
        return {arg.name: getattr(self, arg.name) for arg in self.settings()}


def _values_of(config: Any) -> Mapping[str, Any]:
    """The settings a run's settings dataclass (or a mapping of them) holds, by name."""
    if isinstance(config, Mapping):
        return config
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return vars(config)
    raise TypeError(f"expected a settings dataclass or a mapping of settings, got {short_repr(config)}")


def settings_record(config: Any) -> dict[str, Any]:
    """``config`` (a settings dataclass) as a plain dict of its settings, its
    ``extra`` fields left out (``ArgsProvider.settings_class``): what a run's
    files and checkpoints hold."""
    if isinstance(config, Mapping):
        return dict(config)
    extra = {field.name for field in dataclasses.fields(config) if field.metadata.get(_NOT_A_SETTING)}
    return {name: value for name, value in _values_of(config).items() if name not in extra}


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
        parser = OneLineParser(
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

    def parse(self, argv: Sequence[str] | None = None, defaults: Mapping[str, Any] | None = None,
              defaults_from: str = "the checkpoint's settings") -> dict[str, Any]:
        """Parse ``argv`` (default: ``sys.argv[1:]``).

        Precedence, lowest first: declared defaults, ``defaults`` (e.g. the
        arguments saved in a checkpoint, which an error calls ``defaults_from``;
        keys not declared here are ignored), the ``--config`` file, the command line.
        """
        if defaults:
            self.parser.set_defaults(**{name: convert_from(defaults_from, self.args[name], value)
                                        for name, value in defaults.items() if name in self.args})
        pre, _ = _config_only_parser().parse_known_args(argv)
        if pre.config is not None:
            self.parser.set_defaults(**self.load_config(pre.config))
        namespace = self.parser.parse_args(argv)
        config = vars(namespace)
        config.pop("config")
        return config

    def settings_class(self, name: str, defaults: Mapping[str, Any] | None = None,
                       extra: Sequence[tuple[str, type, Any]] = ()) -> type:
        """The dataclass ``name`` of these settings: one field per setting, of its
        type (``Any`` where its default is None), with its default or the one in
        ``defaults``; then the ``extra`` fields (name, type, default), which
        ``settings_record`` leaves out."""
        suggested = defaults or {}
        fields = [(arg.name, arg.value_type if arg.default is not None else Any,
                   dataclasses.field(default=suggested.get(arg.name, arg.default))) for arg in self.args.values()]
        fields += [(field, kind, dataclasses.field(default=default, metadata={_NOT_A_SETTING: True}))
                   for field, kind, default in extra]
        return dataclasses.make_dataclass(name, fields)

    def check(self, config: Any) -> None:
        """Refuse (``ArgsError``) a value of ``config`` (a settings dataclass or
        mapping) that the command line would refuse for its setting: a
        configuration built in Python (``dataclasses.replace``) is held to the
        parser's rules too."""
        for name, value in settings_record(config).items():
            if name in self.args:
                self.args[name].convert(value)

    def load_config(self, path: str | Path) -> dict[str, Any]:
        """Read a YAML or JSON file (or a shipped config's name), checking every key against the declared args."""
        path = resolve_config(path)
        values = read_config_file(path)
        unknown = sorted(set(values) - set(self.args), key=str)
        if unknown:
            raise ArgsError(f"{path}: unknown arguments {short_repr(unknown)}")
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
    except UnicodeDecodeError:
        raise ArgsError(f"--config {path}: not a text file (not UTF-8)") from None
    try:
        values = json.loads(text) if str(path).endswith(".json") else load_yaml(text)
    except json.JSONDecodeError as error:
        raise ArgsError(f"{path}, line {error.lineno}, column {error.colno}: not valid JSON: {error.msg}") from None
    except RecursionError:
        raise ArgsError(f"{path}: not valid JSON: nested too deeply") from None
    except AliasNotAllowed as error:
        mark = error.problem_mark
        raise ArgsError(f"{path}, line {mark.line + 1}, column {mark.column + 1}: {error.problem}") from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        raise ArgsError(f"{path}, line {mark.line + 1}, column {mark.column + 1}: not valid YAML: "
                        f"{error.problem}") from None
    except yaml.YAMLError as error:
        raise ArgsError(f"{path}: not valid YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(values, dict):
        raise ArgsError(f"{path}: expected a mapping of argument names to values")
    return values


class OneLineParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line: no usage (which
    lists every option of a run: dozens of lines before the one that matters),
    and unrecognized arguments quoted by their prefix only."""

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> argparse.Namespace:
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(short_text(extra) for extra in extras)}")
        return namespace

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


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
            type=arg.read,
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
