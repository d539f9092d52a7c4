"""The engine's limits, importable without the engine (``elfpy._elf``), so
that settings are bounded when parsed, before any game runs."""

__all__ = ["MAX_COUNT"]

MAX_COUNT = 2**31 - 1  # the most games, threads, rows, steps or milliseconds: the engine counts them in a C++ int
