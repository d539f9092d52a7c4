"""Small inputs that write out huge: values shared by reference, for the tests of bad input."""

from __future__ import annotations


def nested_shared_lists(depth: int, width: int = 9) -> list:
    """A list of ``width`` references to one list of ``width`` references to ...:
    small in memory and in a pickle, ``width ** depth`` elements written out."""
    value: list = ["x"] * width
    for _ in range(depth - 1):
        value = [value] * width
    return value


def aliased_yaml(depth: int, width: int = 9) -> str:
    """A "billion laughs": the value of ``lr`` lists anchored lists, each of
    ``width`` aliases of the one before (``width ** depth`` elements written out)."""
    lines = ["lr:", f"- &a0 [{', '.join(['x'] * width)}]"]
    lines += [f"- &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, depth)]
    return "\n".join(lines) + "\n"
