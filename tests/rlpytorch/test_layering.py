"""rlpytorch's layering, read from its source: no import circle, and no import of the engine's C++ module.

Every ``import`` counts, a function's own included (a function-local import
is how a circle hides: the modules still need each other). The graph is read
with ``ast``, so no module is imported here.
"""

import ast
from pathlib import Path

import rlpytorch

PACKAGE = Path(rlpytorch.__file__).resolve().parent
ENGINE_MODULE = "elfpy._elf"


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


def test_the_graph_reads_function_local_and_relative_imports():
    tree = ast.parse("from .b import x\nfrom ..c import y\ndef f():\n    from . import d\n")
    assert imported("rlpytorch.pkg.a", tree, is_package=False) == {
        "rlpytorch.pkg.b", "rlpytorch.pkg.b.x", "rlpytorch.c", "rlpytorch.c.y", "rlpytorch.pkg", "rlpytorch.pkg.d"}
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_rlpytorch_has_no_import_circle():
    graph = import_graph()
    assert "rlpytorch.trainer" in graph and "rlpytorch.acting" in graph  # the package was read
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
