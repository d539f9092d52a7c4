"""Fixtures of the Go tests."""

from __future__ import annotations

import pytest

from elfpy.go import play


class FakeClock:
    """A clock whose time passes only while the search evaluates: `tick`
    seconds per evaluator call (`calls` counts them), so that a test of the
    time a search spends counts evaluations instead of measuring seconds."""

    def __init__(self, tick: float) -> None:
        self.tick = tick
        self.time = 0.0
        self.calls = 0

    def now(self) -> float:
        return self.time

    def evaluator(self, inner: play.Evaluator = play.uniform_evaluator) -> play.Evaluator:
        def evaluate(s, legal):
            self.time += self.tick
            self.calls += 1
            return inner(s, legal)

        return evaluate


@pytest.fixture(scope="session")  # the class, no state: hypothesis's tests may take it too
def fake_clock() -> type[FakeClock]:
    return FakeClock
