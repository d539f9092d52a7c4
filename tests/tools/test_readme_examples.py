"""The README's Python examples run as written: the block under "From Python"
is executed in a fresh folder, and what it built is checked."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def python_block(heading: str) -> str:
    """The first ```python block after ``heading`` in the README."""
    found = re.search(rf"^{re.escape(heading)}\n.*?^```python\n(.*?)^```", README.read_text(), re.S | re.M)
    assert found, f"no python block under {heading!r} in the README"
    return found.group(1)


def test_the_from_python_example_trains_as_the_command_line_does(tmp_path, monkeypatch, one_torch_thread):
    monkeypatch.chdir(tmp_path)  # the first run writes runs/<time> here
    names: dict = {}
    exec(compile(python_block("### From Python"), str(README), "exec"), names)
    run, training = names["run"], names["training"]
    assert run.folder is not None and run.folder.parent == tmp_path / "runs"
    assert run.last_model == run.folder / "last.pt" and run.last_model.is_file()
    assert run.summary.frames > 0 and run.eval is not None and run.history  # trained, evaluated, logged
    assert names["another_seed"].seed == 1 and names["another_seed"].lr == names["config"].lr
    assert training.frames >= 200_000 and training.folder is None
    assert [path.name for path in tmp_path.iterdir()] == ["runs"]  # the folderless run wrote nothing
