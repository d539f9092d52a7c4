"""What a self-play run shows before its first stats line: a line as self-play starts and one as
training starts, and on a terminal a bar that ends at 100%; in a log file, lines only."""

from __future__ import annotations

import io
import re
import sys

from test_alphazero import self_play


class Terminal(io.StringIO):
    """What a terminal receives: both streams' characters, in order."""

    def isatty(self):
        return True


def run_printing_to(stream, monkeypatch) -> str:
    monkeypatch.setattr(sys, "stdout", stream)
    monkeypatch.setattr(sys, "stderr", stream)
    self_play(num_frames=600, save_dir="")
    return stream.getvalue()


def progress_lines(lines: list[str]) -> list[str]:
    """The progress lines, each cut to its kind."""
    kinds = ("self-play:", "training starts:", "loss=")
    return [next(kind for kind in kinds if line.startswith(kind)) for line in lines if line.startswith(kinds)]


def test_on_a_terminal_lines_say_what_runs_and_the_bar_ends_at_100_percent(monkeypatch):
    shown = [part for part in re.split(r"[\r\n]", run_printing_to(Terminal(), monkeypatch)) if part.strip()]
    kinds = progress_lines(shown)
    assert kinds[:3] == ["self-play:", "training starts:", "loss="] and set(kinds[2:]) == {"loss="}
    bars = [part for part in shown if "eval/s" in part]
    assert bars and "100%" in bars[-1] and "600/600" in bars[-1]
    assert shown.index(bars[0]) > next(i for i, part in enumerate(shown) if part.startswith("self-play:"))


def test_in_a_log_file_the_same_lines_and_no_bar(monkeypatch):
    text = run_printing_to(io.StringIO(), monkeypatch)
    assert "\r" not in text and "eval/s" not in text
    kinds = progress_lines(text.splitlines())
    assert kinds[:3] == ["self-play:", "training starts:", "loss="] and set(kinds[2:]) == {"loss="}
