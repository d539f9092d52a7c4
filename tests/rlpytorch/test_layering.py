"""rlpytorch's layering, read from its source: no import circle, no import from a higher layer, a package
root of entry points only, and no import of the engine's C++ module; and, read from what importing loads,
no module but the entry points that run games loads that C++ module.

Every ``import`` counts, a function's own included (a function-local import
is how a circle hides: the modules still need each other). The graph is read
with ``ast``; what a module loads is seen in a child interpreter that imports it.
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

import rlpytorch

PACKAGE = Path(rlpytorch.__file__).resolve().parent
ENGINE_MODULE = "elfpy._elf"
# The layers, lowest first (docs/design.md, "rlpytorch's layers"): a module imports only from its own
# layer or a lower one. ROOT is the package's own modules, the entry points run as ``python -m rlpytorch.X``.
ROOT = "(package root)"
LAYERS = ["core", "acting", "models", "replay", "methods", "learners", "run", "recipes", ROOT]
MAX_ROOT_MODULES = 10  # few enough that a newcomer sees the entry points at a glance
# The entry points that run games (a training: its assembly and its command line; an evaluation; and the
# launcher and tuner, which import the training's command line): they may load the engine. No other module
# may, whatever it imports on the way.
RUNS_GAMES = {"rlpytorch.training", "rlpytorch.train", "rlpytorch.evaluate", "rlpytorch.launch", "rlpytorch.tune"}
# Imports each module named on the command line in this order and prints (JSON) those whose import asked
# for the engine module. Asking is refused, so the engine never loads, a later module that needs it asks
# again (a failed import is not kept), and each one that would load it is named; a refusal some module
# catches is named all the same.
_ENGINE_LOADERS = f"""
import importlib, importlib.abc, json, sys

asked, importing = [], None

class RefuseEngine(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == {ENGINE_MODULE!r}:
            asked.append(importing)
            raise ImportError("refused: " + name)
        return None

sys.meta_path.insert(0, RefuseEngine())
for importing in sys.argv[1:]:
    try:
        importlib.import_module(importing)
    except ImportError:
        if importing not in asked:
            raise
assert {ENGINE_MODULE!r} not in sys.modules
print(json.dumps(sorted(set(asked))))
"""


def module_name(path: Path) -> str:
    parts = ("rlpytorch", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, ast.Module]:
    """Every module of rlpytorch, parsed: dotted name -> tree."""
    return {module_name(path): ast.parse(path.read_text(), str(path)) for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, tree: ast.Module, is_package: bool) -> set[str]:
    """The absolute names every import statement of module ``name`` brings in (``from X import y``
    counts as ``X.y`` too, so a submodule imported by name is found)."""
    package = name if is_package else name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            source = ".".join(part for part in (base, node.module or "") if part)
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the rlpytorch modules it imports."""
    trees = modules()
    packages = {name for name, tree in trees.items() if (PACKAGE.parent / name.replace(".", "/")).is_dir()}
    return {name: {target for target in imported(name, tree, name in packages) if target in trees} - {name}
            for name, tree in trees.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer_of(name: str) -> str:
    """The layer of module ``name``: its subpackage under rlpytorch, or ROOT for the package's own modules."""
    parts = name.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()) else ROOT


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module from a higher layer than its own, as "importer -> imported", and every
    module whose layer LAYERS does not declare (a new subpackage needs its place in the order)."""
    rank = {layer: position for position, layer in enumerate(LAYERS)}
    undeclared = sorted(f"{name}: layer {layer_of(name)!r} is not in LAYERS" for name in graph
                        if layer_of(name) not in rank)
    return undeclared or sorted(f"{name} -> {target}" for name, targets in graph.items() for target in targets
                                if rank[layer_of(target)] > rank[layer_of(name)])


def test_the_graph_reads_function_local_and_relative_imports():
    tree = ast.parse("from .b import x\nfrom ..c import y\ndef f():\n    from . import d\n")
    assert imported("rlpytorch.pkg.a", tree, is_package=False) == {
        "rlpytorch.pkg.b", "rlpytorch.pkg.b.x", "rlpytorch.c", "rlpytorch.c.y", "rlpytorch.pkg", "rlpytorch.pkg.d"}
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_rlpytorch_has_no_import_circle():
    graph = import_graph()
    assert "rlpytorch.learners.trainer" in graph and "rlpytorch.acting.act" in graph  # the package was read
    assert circles(graph) == []


def test_rlpytorch_never_imports_the_engine_module():
    """The library sees batches as mappings (rlpytorch/README.md); only elfpy talks to the C++ module."""
    offenders = []
    for name, tree in modules().items():
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [node.value]  # import_module("elfpy._elf") and the like
            offenders += [f"{name}: {n}" for n in names if n == ENGINE_MODULE or n.startswith(ENGINE_MODULE + ".")]
    assert offenders == []


def engine_loaders(names: list[str]) -> list[str]:
    """Those of the modules ``names`` whose import loads the engine module, imported in a child interpreter."""
    done = subprocess.run([sys.executable, "-c", _ENGINE_LOADERS, *names], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_load_check_names_each_module_that_loads_the_engine():
    assert engine_loaders(["elfpy.files", "elfpy.context", "elfpy.vector", "elfpy.parent_watch"]) == [
        "elfpy.context", "elfpy.vector"]


def test_no_module_but_the_entry_points_that_run_games_loads_the_engine():
    """Importing a model, a method, a replay or a runner (and ``elfpy`` itself, and the engine-free helpers
    of elfpy that rlpytorch writes its files with) loads no ``elfpy._elf``: they can be used, tested and
    documented without the engine built."""
    names = sorted(set(modules()) - RUNS_GAMES)
    assert "rlpytorch.models.base" in names and "rlpytorch.run.single_process" in names
    assert engine_loaders(["elfpy", "elfpy.files", "elfpy.parent_watch", "elfpy.limits", *names]) == []


def test_the_layer_check_finds_an_upward_import():
    graph = {"rlpytorch.core.stats": {"rlpytorch.learners.trainer"}, "rlpytorch.learners.trainer": {
        "rlpytorch.core.stats", "rlpytorch.learners.value_trainer"}, "rlpytorch.train": {"rlpytorch.run.resume"}}
    assert upward_imports(graph) == ["rlpytorch.core.stats -> rlpytorch.learners.trainer"]
    assert upward_imports({"rlpytorch.extra.x": set()}) == ["rlpytorch.extra.x: layer 'extra' is not in LAYERS"]
    assert layer_of("rlpytorch") == layer_of("rlpytorch.train") == ROOT
    assert layer_of("rlpytorch.run") == layer_of("rlpytorch.run.resume") == "run"


def test_every_subpackage_is_a_declared_layer():
    subpackages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert subpackages == set(LAYERS) - {ROOT}


def test_no_module_imports_from_a_higher_layer():
    assert upward_imports(import_graph()) == []


def test_the_package_root_holds_only_a_few_modules():
    root_modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert "train.py" in root_modules and len(root_modules) <= MAX_ROOT_MODULES, root_modules
