"""Every GameContext a test creates is stopped when the test ends, pass or
fail, so a failing test can not leave worker threads behind for the next one
(several tests count the process's OS threads). Ctrl-C raises
KeyboardInterrupt in every test, as in a terminal, even when the suite runs
as a shell's background job (which starts Python with SIGINT ignored)."""

from __future__ import annotations

import signal
import weakref

import pytest

import elfpy


@pytest.fixture(autouse=True)
def stop_contexts_after_each_test(monkeypatch):
    created = []
    original_init = elfpy.GameContext.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        created.append(weakref.ref(self))

    monkeypatch.setattr(elfpy.GameContext, "__init__", init)
    yield
    for ref in created:
        context = ref()
        if context is not None:
            context.stop()


@pytest.fixture(autouse=True)
def ctrl_c_raises_keyboard_interrupt():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
