"""Child interpreters (a hosted game's worker processes, a game's first look
in a child) import the elfpy this process imported, whatever the working folder
holds: an `elfpy` there (a second checkout) would be a build whose workers
misread the shared block."""

import numpy as np

import elfpy
from elfpy.child_call import call_in_child


def _elfpy_file() -> str:
    return elfpy.__file__


def test_a_shadowing_elfpy_in_the_working_folder_is_not_imported(tmp_path, monkeypatch):
    (tmp_path / "elfpy").mkdir()
    (tmp_path / "elfpy" / "__init__.py").write_text("raise ImportError('the elfpy of the working folder')\n")
    monkeypatch.chdir(tmp_path)
    assert call_in_child(_elfpy_file, (), timeout_s=60) == elfpy.__file__
    gc = elfpy.GameContext("gym:CartPole-v1", num_games=2, num_threads=1, num_workers=1)
    gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"])
    gc.reg_callback("actor", lambda batch: {"a": np.zeros(len(batch), np.int64)})
    with gc:
        for _ in range(3):
            assert gc.run() == "actor"
