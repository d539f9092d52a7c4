"""``python -m elfweb``'s own words: its help, and a bad argument refused in one line before anything serves."""

import pytest

from elfweb.__main__ import main


def test_help_names_the_command_and_its_defaults(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m elfweb ") and "(default: 127.0.0.1)" in out


@pytest.mark.parametrize("argv, named", [
    (["--load", "no/such/checkpoint.pt"], "no checkpoint at no/such/checkpoint.pt"),
    (["--load", "no/such/network.pt2"], "no/such/network.pt2"),
    (["--game", "cartpole"], "game 'cartpole' cannot draw itself"),
    (["--playouts", "0"], "--playouts must be at least 1, got 0"),
    (["--max_viewers", "0"], "--max_viewers must be at least 1, got 0"),
])
def test_a_bad_argument_is_one_line(capsys, argv, named):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("python -m elfweb: error: ") and named in error
