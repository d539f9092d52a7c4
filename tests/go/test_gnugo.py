"""Matches against GNU Go over GTP (installed by scripts/setup.sh): every move of
each side accepted by the other, and at the end both programs score the board alike."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from elfpy.go import clock, play
from elfpy.go import gnugo as gnugo_module
from elfpy.go.gnugo import GnuGo, GtpProcess, play_game
from elfpy.gtp import GtpEngine, load_evaluator

PRETRAINED = Path(__file__).resolve().parents[2] / "pretrained" / "go9_selfplay_64min.pt2"


def test_uniform_search_loses_the_whole_board_and_both_programs_count_it():
    engine = GtpEngine(play.uniform_evaluator, playouts=8, pass_only_when_done=True)
    with engine, GnuGo(level=1, seed=0) as gnugo:
        game = play_game(engine, gnugo, ours="b")
    # GNU Go captures every black stone before passing: 81 points for white, plus komi.
    assert game.resigned is None and game.score == game.gnugo_score == "W+88.5"
    assert game.winner == "w" and 81 < game.moves < 2 * 81


def test_trained_network_plays_a_contested_game_scored_alike_by_both(one_torch_thread):
    # With one torch thread the game is the same every time: black, at 32 playouts, loses by 4.5,
    # on a board where the stones of both sides count.
    engine = GtpEngine(load_evaluator(str(PRETRAINED)), playouts=32, pass_only_when_done=True)
    with engine, GnuGo(level=1, seed=0) as gnugo:
        game = play_game(engine, gnugo, ours="b")
    assert game.resigned is None and game.score == game.gnugo_score
    margin = float(game.score[2:])
    assert margin < 81 + 7.5  # neither side took the whole board: stones of both count


def test_whole_games_against_gnugo_through_the_gtp_process_and_commands_after_their_end():
    # Our engine as a separate process, as a GTP controller runs it: a game with each colour, through
    # final_score, then commands after the end; any refusal or exit raises in GtpProcess.send.
    argv = [sys.executable, "-m", "elfpy.gtp", "--playouts", "8", "--pass_only_when_done"]
    with GtpProcess(argv, "elf-go") as ours, GnuGo(level=1, seed=0) as gnugo:
        for our_color in "bw":
            players = {our_color: ours, "w" if our_color == "b" else "b": gnugo}
            color, passes, moves = "b", 0, 0
            while passes < 2:
                move = players[color].send(f"genmove {color}")
                other = "w" if color == "b" else "b"
                players[other].send(f"play {color} {move}")
                passes, moves, color = (passes + 1 if move.lower() == "pass" else 0), moves + 1, other
                assert moves <= 2 * 81
            assert ours.send("final_score") == gnugo.send("final_score")
            assert [ours.send(f"genmove {c}") for c in "bw"] == ["pass", "pass"]
            assert ours.send("play b pass") == gnugo.send("play b pass") == ""  # a move after the end: both play on
            assert ours.send("undo") == "" and ours.send("clear_board") == gnugo.send("clear_board") == ""
    assert ours.process.returncode == 0


def test_a_match_on_a_clock_refereed_as_gogui_twogtp_does_is_never_lost_on_time(fake_clock):
    """Both programs get time_settings, the mover time_left before each genmove; the referee takes each
    genmove's time off the mover's clock. Time passes 1/16 s per evaluation of ours (none while GNU Go
    thinks), so each of our searches is a count of evaluations, checked against the budget it was given."""
    fake = fake_clock(tick=1 / 16)
    engine = GtpEngine(fake.evaluator(), playouts=8, pass_only_when_done=True, lag_buffer=0.5, now=fake.now)
    searches = []  # (budget, clock before the move, evaluations)
    genmove = engine.commands["genmove"]

    def recorded_genmove(args: list[str]) -> str:
        budget, before, calls = engine.move_budget(args[0]), engine.clocks[args[0]], fake.calls
        answer = genmove(args)
        searches.append((budget, before, fake.calls - calls))
        return answer

    engine.commands["genmove"] = recorded_genmove
    control = clock.TimeControl(clock.CANADIAN, 10, 5, 5)  # 10 s, then 5 s for each 5 stones
    with engine, GnuGo(level=1, seed=0) as gnugo:
        game = play_game(engine, gnugo, "b", control, now=fake.now)
    assert game.out_of_time is None and game.resigned is None and game.score == game.gnugo_score
    assert len(searches) > 20 and all(budget > 0 for budget, _, _ in searches)
    for budget, _, calls in searches:  # each search stopped at the first evaluation that reached its budget
        assert (calls - 1) * fake.tick < budget <= calls * fake.tick
    in_byo_yomi = [before for _, before, _ in searches if before.stones > 0]
    assert len(in_byo_yomi) > 10  # main time ran out: the moves went on in the periods, as time_left told
    assert engine.clocks["b"].seconds >= 0 and not engine.clocks["b"].out_of_time  # its own count agrees


def test_a_refused_setup_command_raises_and_leaves_no_process(monkeypatch):
    started = []
    popen = gnugo_module.subprocess.Popen

    def recorded_popen(*args, **kwargs):
        started.append(popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(gnugo_module.subprocess, "Popen", recorded_popen)
    with pytest.raises(RuntimeError, match="boardsize 99"):
        GnuGo(size=99)  # GNU Go plays boards up to 19x19
    assert started and started[0].poll() is not None


def test_missing_gnugo_is_named_with_how_to_install_it(monkeypatch):
    monkeypatch.setattr(gnugo_module, "gnugo_path", lambda: None)
    with pytest.raises(FileNotFoundError, match="apt-get install gnugo"):
        GnuGo()


@pytest.mark.parametrize(("command", "extra"), [("gnugo", ["--leaves", "2"]), ("versus", [])])
def test_bench_go_matches_run_and_count_every_game(command, extra):
    """bench_go.py's two match commands, two tiny games each: the closing line
    counts both (gnugo's also by colour: results report the win rate as each colour)."""
    bench = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_go.py"
    run = subprocess.run([sys.executable, str(bench), command, "--load", str(PRETRAINED), "--games", "2",
                          "--playouts", "4", "--pass_only_when_done", *extra], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    closing = run.stdout.strip().splitlines()[-1]
    if command == "gnugo":
        won, black, white = (int(n) for n in re.fullmatch(
            r"won (\d) of 2 against GNU Go level 1 at 4 playouts \((\d) of 1 as black, (\d) of 1 as white\); "
            r"2 distinct games",
            closing).groups())
        assert won == black + white
    else:
        assert re.fullmatch(r"network won \d of 2 against the search without a network \(4 playouts each\)", closing)


def test_bench_go_match_refuses_leaves_below_one_before_playing():
    bench = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_go.py"
    run = subprocess.run([sys.executable, str(bench), "gnugo", "--leaves", "0"], capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.strip().splitlines()[-1].endswith("--leaves must be >= 1, got 0")
