"""The documentation's Python examples run as written: the README's loop, the
tour's loop and the "From Python" block of docs/training.md are executed (the
last in a fresh folder), and what each built is checked."""

import re
from pathlib import Path

import numpy as np

import elfpy

ROOT = Path(__file__).resolve().parents[2]


def python_block(page: str, heading: str) -> str:
    """The first ```python block after ``heading`` in ``page`` (a path from the repository's root)."""
    found = re.search(rf"^{re.escape(heading)}\n.*?^```python\n(.*?)^```", (ROOT / page).read_text(), re.S | re.M)
    assert found, f"no python block under {heading!r} in {page}"
    return found.group(1)


def run_block(page: str, heading: str) -> dict:
    names: dict = {}
    exec(compile(python_block(page, heading), str(ROOT / page), "exec"), names)
    return names


def test_the_readme_loop_serves_every_batch_to_its_callback(monkeypatch):
    tags = []
    run = elfpy.GameContext.run

    def counted_run(self):
        tags.append(run(self))
        return tags[-1]

    monkeypatch.setattr(elfpy.GameContext, "run", counted_run)
    run_block("README.md", "## The loop")
    assert tags == ["actor"] * 1000  # every gc.run() of the block delivered an actor batch and sent its replies


def test_the_tour_loop_reads_the_returns_of_a_random_policy(capsys):
    names = run_block("docs/tour.md", "## The loop")
    assert len(names["returns"]) >= 100
    assert 10 < np.mean(names["returns"]) < 40  # a random CartPole policy's mean return is about 22
    assert "random policy: mean return" in capsys.readouterr().out


def test_the_from_python_example_trains_as_the_command_line_does(tmp_path, monkeypatch, one_torch_thread):
    monkeypatch.chdir(tmp_path)  # the first run writes runs/<time> here
    names = run_block("docs/training.md", "## From Python")
    run, training = names["run"], names["training"]
    assert run.folder is not None and run.folder.parent == tmp_path / "runs"
    assert run.last_model == run.folder / "last.pt" and run.last_model.is_file()
    assert run.summary.frames > 0 and run.eval is not None and run.history  # trained, evaluated, logged
    assert names["another_seed"].seed == 1 and names["another_seed"].lr == names["config"].lr
    assert training.frames >= 200_000 and training.folder is None
    assert [path.name for path in tmp_path.iterdir()] == ["runs"]  # the folderless run wrote nothing
