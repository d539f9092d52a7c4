"""GTP transcripts: the engine's answers to scripted sessions, word for word."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import elfpy
from elfpy.go import clock, play
from elfpy.gtp import GtpEngine, load_evaluator, serve
from rlpytorch.models.policy_value import PolicyValueNet, PolicyValueSettings, export_evaluator

PRETRAINED = Path(__file__).resolve().parents[2] / "pretrained" / "go9_selfplay_64min.pt2"


def transcript(commands: str, **engine_args) -> str:
    out = io.StringIO()
    serve(GtpEngine(**engine_args), io.StringIO(commands), out)
    return out.getvalue()


def test_administrative_commands_answer_per_gtp_version_2():
    out = transcript("protocol_version\n1 name\nversion\nknown_command genmove\nknown_command fly\nquit\n")
    assert out == "= 2\n\n=1 elf-go\n\n= 0.1\n\n= true\n\n= false\n\n= \n\n"


def test_list_commands_names_every_required_command():
    listed = transcript("list_commands\n").split("\n")
    required = ["protocol_version", "name", "version", "known_command", "list_commands", "boardsize",
                "clear_board", "komi", "play", "genmove", "undo", "final_score", "showboard", "quit",
                "final_status_list", "time_settings", "time_left", "kgs-time_settings"]
    assert listed[0] == "= protocol_version"
    assert sorted(listed[1:-2] + ["protocol_version"]) == sorted(required)


def test_errors_for_unknown_commands_illegal_moves_and_bad_arguments():
    out = transcript("fly\nplay b D4\nplay w D4\nplay b Z9\nboardsize 7\nundo\nundo\nundo\nkomi x\nplay q D5\n")
    assert out == ("? unknown command\n\n= \n\n? illegal move\n\n? invalid vertex\n\n? unacceptable size\n\n"
                   "= \n\n? cannot undo\n\n? cannot undo\n\n? syntax error\n\n? invalid color\n\n")


def test_play_capture_showboard_and_final_score():
    # Black captures white's E5 stone; the area then reaches only black.
    moves = "play b E4\nplay w E5\nplay b D5\nplay w pass\nplay b F5\nplay w pass\nplay b E6\n"
    out = transcript("boardsize 9\nclear_board\nkomi 6.5\n" + moves + "showboard\nfinal_score\n")
    board = out.split("= \n\n")[-1]
    assert board.startswith("= \n   A B C D E F G H J\n 9 . . . . . . . . .  9\n")
    assert " 5 . . . X . X . . .  5\n" in board  # E5 was captured
    assert " 6 . . . . X . . . .  6\n" in board
    assert "White to move, komi 6.5\n" in board
    assert board.endswith("= B+74.5\n\n")  # 81 points for black - 6.5


def test_ko_retake_is_illegal_until_a_move_elsewhere():
    # Black C8 captures B8; white's immediate retake at B8 would repeat the position.
    shape = "play b B9\nplay w C9\nplay b A8\nplay w B8\nplay b B7\nplay w D8\nplay b J9\nplay w C7\n"
    out = transcript("boardsize 9\n" + shape + "play b C8\nplay w B8\nplay w J1\nplay b J2\nplay w B8\nundo\n")
    answers = out.split("\n\n")[:-1]
    assert answers[:10] == ["= "] * 10
    assert answers[10:] == ["? illegal move", "= ", "= ", "= ", "= "]


def test_genmove_plays_the_searched_move_and_the_opponent_can_answer():
    out = transcript("boardsize 9\ngenmove b\ngenmove w\nshowboard\n", playouts=16)
    answers = out.split("\n\n")
    first, second = answers[1][2:], answers[2][2:]
    assert first != second and all(len(v) in (2, 4) for v in (first, second))
    board = answers[3].split("\n")[2:-2]  # the rows
    assert sum(row.count("X") for row in board) == (first != "pass")
    assert sum(row.count("O") for row in board) == (second != "pass")


def test_command_line_entry_point_speaks_gtp_over_pipes():
    run = subprocess.run([sys.executable, "-m", "elfpy.gtp", "--playouts", "8"], input="name\ngenmove b\nquit\n",
                         capture_output=True, text=True, check=True)
    answers = run.stdout.split("\n\n")
    assert answers[0] == "= elf-go"
    assert answers[1].startswith("= ") and len(answers[1]) >= 4


@pytest.mark.parametrize(("options", "message"), [
    (["--komi", "nan"], "komi must be a number in [-10000.0, 10000.0], got nan"),
    (["--komi", "inf"], "komi must be a number in [-10000.0, 10000.0], got inf"),
    (["--komi", "1e5"], "komi must be a number in [-10000.0, 10000.0], got 100000.0"),
    (["--board_size", "7"], "board_size must be one of 9, 13, 19, got 7"),
    (["--playouts", "0"], "playouts must be an integer in [1, 2147483647], got 0"),
    (["--max_playouts", "0"], "max_playouts must be an integer in [1, 2147483647], got 0"),
    (["--leaves", "0"], "leaves must be an integer in [1, 4096], got 0"),
    (["--resign_threshold", "nan"], "resign_threshold must be a number in [-1.0, 1.0], got nan"),
    (["--resign_threshold", "1.5"], "resign_threshold must be a number in [-1.0, 1.0], got 1.5"),
    (["--lag_buffer", "-1"], "lag_buffer must be a number in [0.0, 2147483647.0], got -1.0"),
    (["--sampled_moves", "-1"], "sampled_moves must be an integer in [0, 2147483647], got -1"),
    (["--seed", "-1"], "seed must be an integer in [0, 9223372036854775807], got -1"),
])
def test_an_option_out_of_range_is_refused_in_one_line_before_the_engine_speaks(options, message):
    run = subprocess.run([sys.executable, "-m", "elfpy.gtp", *options], input="name\nquit\n",
                         capture_output=True, text=True)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines()[-1] == f"python -m elfpy.gtp: error: {message}"


def test_a_board_size_the_network_cannot_play_is_refused_at_start_and_by_boardsize():
    engine_args = {"evaluator": load_evaluator(str(PRETRAINED)), "playouts": 2}
    with pytest.raises(ValueError, match=r"board_size 13: the network cannot evaluate a 13x13 board \(ValueError: "):
        GtpEngine(board_size=13, **engine_args)
    out = transcript("boardsize 19\nboardsize 13\nboardsize 7\nboardsize 2147483648\nboardsize 9\ngenmove b\n",
                     **engine_args)
    answers = answers_of(out)
    assert answers[:3] == ["? unacceptable size"] * 3
    assert answers[3:5] == ["? syntax error", "= "]  # not a GTP int (0 <= x < 2^31); the size it plays
    assert re.fullmatch(r"= [A-HJ][1-9]|= pass", answers[5])  # the game goes on at 9x9
    run = subprocess.run([sys.executable, "-m", "elfpy.gtp", "--load", str(PRETRAINED), "--board_size", "19"],
                         input="name\n", capture_output=True, text=True)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines()[-1].startswith("python -m elfpy.gtp: error: board_size 19: the network cannot "
                                                  "evaluate a 19x19 board (ValueError: ")


def test_exported_network_plays_through_gtp(tmp_path):
    path = str(tmp_path / "net.pt2")
    planes = elfpy.GameContext("go", num_games=1, num_threads=1).spec()["s"].shape[0]
    net = PolicyValueNet(planes, 9, 82, PolicyValueSettings(channels=4, blocks=1))
    export_evaluator(net, torch.zeros(2, planes, 9, 9, dtype=torch.uint8), torch.ones(2, 82, dtype=torch.uint8), path)
    evaluator = load_evaluator(path)
    policy, value = evaluator(torch.zeros(3, planes, 9, 9, dtype=torch.uint8).numpy(),
                              torch.ones(3, 82, dtype=torch.uint8).numpy())
    assert policy.shape == (3, 82) and value.shape == (3,)
    assert abs(policy.sum(axis=1) - 1).max() < 1e-5 and abs(value).max() <= 1
    out = transcript("genmove b\nplay w pass\ngenmove b\n", evaluator=evaluator, playouts=8)
    answers = out.split("\n\n")
    assert answers[0].startswith("= ") and answers[1] == "= " and answers[2].startswith("= ")


def test_pass_only_when_done_keeps_a_network_that_wants_to_pass_playing():
    def wants_to_pass(s, legal):
        policy = np.zeros(legal.shape, np.float32)
        policy[:, -1] = 1.0
        return policy, np.zeros(len(s), np.float32)

    # After black's pass, white's pass ends the game won on komi: the search takes it...
    assert transcript("play b pass\ngenmove w\n", evaluator=wants_to_pass, playouts=16) == "= \n\n= pass\n\n"
    # ...unless the pass is kept for a board where only own eyes are left.
    out = transcript("play b pass\ngenmove w\n", evaluator=wants_to_pass, playouts=16, pass_only_when_done=True)
    assert out.startswith("= \n\n= ") and out != "= \n\n= pass\n\n"


def answers_of(out: str) -> list[str]:
    """The answers of a transcript, each checked to be one well-formed GTP response."""
    assert out.endswith("\n\n")
    answers = out[:-2].split("\n\n")
    for answer in answers:
        assert re.match(r"[=?]\d* ", answer + " "), answer
    return answers


def test_refused_komi_and_vertices_change_nothing():
    out = transcript("komi nan\nkomi inf\nkomi -inf\nkomi 1e3\nkomi 7.5.1\nkomi 1_0\nkomi 99999\nkomi\n"
                     "play b D4,W\nplay b Z99\nplay b D0\nplay b I5\nplay b J10\nplay b\nplay b D 4\n"
                     "komi -0.5\nplay b d4\nshowboard\nfinal_score\n")
    answers = answers_of(out)
    assert answers[:8] == ["? syntax error"] * 6 + ["? komi out of range", "? syntax error"]
    assert answers[8:15] == ["? invalid vertex"] * 5 + ["? syntax error"] * 2
    assert answers[15:17] == ["= ", "= "]
    assert sum(row.count("X") for row in answers[17].split("\n")[2:-2]) == 1
    assert answers[17].endswith("White to move, komi -0.5")
    assert answers[18] == "= B+81.5"  # the one stone takes the board; komi -0.5 counts for black


def test_commands_in_unusual_orders_each_get_their_answer():
    commands = [
        ("final_score", "= W+7.5"),                 # before any move
        ("play b D4", "= "), ("final_score", "= B+73.5"),  # mid-game
        ("play w pass", "= "), ("play b pass", "= "),      # the game ends
        ("genmove w", "= pass"), ("12 genmove b", "=12 pass"),  # after the end: pass, nothing played
        ("play w E5", "= "), ("final_score", "= W+7.5"),  # a move after the end resumes the game (as GNU Go)
        ("undo", "= "), ("final_score", "= B+73.5"), ("play b E5", "= "),
        ("clear_board", "= "), ("final_score", "= W+7.5"), ("play b E5", "= "),
        ("boardsize 13", "= "), ("play w N13", "= "), ("final_score", "= W+176.5"),
        ("boardsize 9", "= "), ("play w N13", "? invalid vertex"),
        ("undo", "? cannot undo"), ("fly", "? unknown command"), ("7 fly", "?7 unknown command"),
        ("genmove", "? syntax error"), ("genmove purple", "? invalid color"), ("9", "?9 no command"),
    ]
    out = transcript("".join(command + "\n" for command, _ in commands), playouts=4)
    assert answers_of(out) == [answer for _, answer in commands]


def test_a_failing_evaluator_is_answered_and_the_engine_goes_on():
    calls = 0

    def fails_midgame(s, legal):  # passes the engine's check of the board size, then fails as a network may
        nonlocal calls
        calls += 1
        if calls > 1:
            raise RuntimeError("out of memory")
        return play.uniform_evaluator(s, legal)

    answers = answers_of(transcript("genmove b\nplay b D4\nfinal_score\n", evaluator=fails_midgame, playouts=4))
    assert answers == ["? genmove failed: RuntimeError: out of memory", "= ", "= B+73.5"]


def test_the_process_answers_every_command_and_lives_until_quit():
    lines = [b"play b pass", b"play w pass", b"genmove b", b"play b D4", b"komi nan", b"play b D4,W",
             b"\xff\xfe not utf-8", b"boardsize 19", b"genmove w", b"undo", b"final_score", b"list_commands",
             b"clear_board", b"genmove b", b"quit", b"name"]
    run = subprocess.run([sys.executable, "-m", "elfpy.gtp", "--playouts", "4"], input=b"\n".join(lines) + b"\n",
                         capture_output=True, check=True)
    answers = answers_of(run.stdout.decode())
    assert len(answers) == len(lines) - 1  # everything up to quit; nothing after it
    assert answers[2] == "= pass" and answers[4:7] == ["? syntax error", "? invalid vertex", "? unknown command"]
    assert answers[-1] == "= " and run.stderr == b""


GTP_WORDS = st.sampled_from(["b", "w", "D4", "E5", "pass", "resign", "Z99", "D0", "D4,W", "T19", "N13", "x", "nan",
                             "-3.5", "9", "13", "19", "7", "", "1e3", "0", "2147483648", "alive", "dead", "seki",
                             "none", "absolute", "byoyomi", "canadian"])
COMMANDS = st.sampled_from(["play", "genmove", "undo", "clear_board", "final_score", "showboard", "komi",
                            "boardsize", "known_command", "fly", "quit", "final_status_list", "time_settings",
                            "kgs-time_settings", "time_left"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(COMMANDS, st.lists(GTP_WORDS, max_size=4)), max_size=12))
def test_any_command_sequence_gets_one_well_formed_answer_per_command(fake_clock, commands):
    fake = fake_clock(tick=0.125)  # a clock the commands set is spent in evaluations, not seconds
    with GtpEngine(fake.evaluator(), playouts=2, now=fake.now) as engine:
        for name, args in commands:
            response, done = engine.handle(" ".join([name, *args]))
            answers = answers_of(response)
            assert len(answers) == 1 or name == "showboard"
            assert " failed: " not in response  # every refusal is one the engine foresaw
            if done:
                break


def test_the_search_is_kept_while_the_game_follows_it_and_dropped_when_it_leaves():
    engine = GtpEngine(playouts=8, leaves=2)
    engine.handle("genmove b")
    kept = engine._tree
    engine.handle("play w E5")
    engine.handle("genmove b")
    assert engine._tree is kept and (kept.moves, kept.to_move) == (3, "w")
    engine.handle("genmove w")  # the engine may play both sides: still the same search
    assert engine._tree is kept and kept.moves == 4
    for command in ("undo", "clear_board", "komi 6.5", "boardsize 9"):
        engine.handle("genmove b")
        assert engine._tree is not None
        engine.handle(command)
        assert engine._tree is None, command
    engine.handle("genmove b")
    engine.handle("play b C3")  # not the side the search waits for: it is dropped, the move is played
    assert engine._tree is None and engine.moves[-1] == ("b", "C3")
    engine.close()


def test_serving_ends_the_kept_search_and_its_thread():
    def threads() -> int:  # the engine's C++ threads too, which Python's threading does not count
        return len(os.listdir("/proc/self/task"))

    threads_before = threads()
    out = transcript("genmove b\nplay w E5\ngenmove b\n", playouts=8)  # ends with a search kept, no quit
    assert answers_of(out)[1] == "= "
    assert threads() == threads_before


def test_without_tree_reuse_a_kept_search_still_plays_the_game():
    answers = answers_of(transcript("genmove b\nplay w E5\ngenmove b\nshowboard\n", playouts=8, reuse_tree=False))
    assert answers[:2] == ["= A9", "= "] and answers[2].startswith("= ") and "O" in answers[3]


def test_a_move_after_two_passes_resumes_the_game_as_gnu_go_does():
    out = transcript("play b pass\nplay w pass\ngenmove b\nplay b E5\nplay w pass\ngenmove b\nshowboard\n"
                     "final_score\n", playouts=8)
    answers = answers_of(out)
    assert answers[:5] == ["= ", "= ", "= pass", "= ", "= "]  # after the end genmove passes; play plays on
    assert re.fullmatch(r"= [A-HJ][1-9]|= pass", answers[5]) and answers[5] != "= pass"  # the game goes on
    assert sum(row.count("X") for row in answers[6].split("\n")[2:-2]) == 2
    assert answers[7] == "= B+73.5"  # both black stones, the whole board, less komi


def test_final_status_list_answers_as_final_score_counts_every_stone_alive():
    moves = "play b E5\nplay w D4\nplay b C3\nplay b E4\n"
    out = transcript(moves + "final_status_list dead\nfinal_status_list alive\nfinal_status_list SEKI\n"
                     "final_status_list\nfinal_status_list black_territory\nfinal_score\n")
    assert answers_of(out)[4:] == ["= ", "= E5 E4\nD4\nC3", "= ", "? syntax error", "? invalid status", "= W+5.5"]
    # ^ Tromp-Taylor: no stone is dead, so final_score counts them all (3 black - 1 white - 7.5 komi)
    assert transcript("final_status_list alive\n") == "= \n\n"


def test_time_commands_take_gtp_ints_and_kgs_systems_and_refuse_the_rest():
    commands = [
        ("time_settings 300 30 5", "= ", clock.TimeControl(clock.CANADIAN, 300, 30, 5)),
        ("time_settings 300 0 0", "= ", clock.TimeControl(clock.ABSOLUTE, 300)),
        ("time_settings 0 1 0", "= ", clock.TimeControl(clock.NO_LIMIT)),
        ("kgs-time_settings byoyomi 600 30 5", "= ", clock.TimeControl(clock.BYOYOMI, 600, 30, 5)),
        ("kgs-time_settings byoyomi 600 30 0", "= ", clock.TimeControl(clock.ABSOLUTE, 600)),
        ("kgs-time_settings canadian 600 60 25", "= ", clock.TimeControl(clock.CANADIAN, 600, 60, 25)),
        ("kgs-time_settings absolute 900", "= ", clock.TimeControl(clock.ABSOLUTE, 900)),
        ("KGS-TIME_SETTINGS NONE", "= ", clock.TimeControl(clock.NO_LIMIT)),
    ]
    refused = [
        ("time_settings 300 30", "? syntax error"), ("time_settings 300 -30 5", "? syntax error"),
        ("time_settings 1.5 0 0", "? syntax error"), ("time_settings 2147483648 0 0", "? syntax error"),
        ("time_settings nan 0 0", "? syntax error"), ("kgs-time_settings fischer 300 10", "? unknown time system"),
        ("kgs-time_settings byoyomi 600 30", "? syntax error"), ("kgs-time_settings absolute", "? syntax error"),
        ("kgs-time_settings none 5", "? syntax error"), ("kgs-time_settings", "? syntax error"),
        ("time_left b 30", "? syntax error"), ("time_left x 30 0", "? invalid color"),
        ("time_left b -1 0", "? syntax error"), ("time_left b inf 0", "? syntax error"),
    ]
    with GtpEngine() as engine:
        for command, answer, control in commands:
            assert engine.handle(command)[0] == answer + "\n\n", command
            assert engine.time_control == control, command
        for command, answer in refused:
            assert engine.handle(command)[0] == answer + "\n\n", command
            assert engine.time_control == clock.TimeControl(clock.NO_LIMIT), command  # unchanged
        assert engine.handle("time_left w 25 3")[0] == "= \n\n"
        assert engine.clocks["w"] == clock.ClockState(25, 3)


def test_with_a_clock_each_search_spends_its_share_of_the_time_left(fake_clock):
    """Time passes 1/8 s per evaluation here, so each budget is a count of evaluations."""
    fake = fake_clock(tick=0.125)
    engine = GtpEngine(fake.evaluator(), playouts=4, leaves=4, now=fake.now)  # lag_buffer 1 s

    def evaluations(command: str) -> int:
        calls = fake.calls
        assert engine.handle(command)[0].startswith("= "), command
        return fake.calls - calls

    with engine:
        assert evaluations("genmove b") <= 2  # no clock: 4 playouts, 4 leaves at a time
        engine.handle("clear_board")
        engine.handle("time_settings 41 0 0")  # absolute: (41 s - 1 s) / 40 moves to come = 1 s a move
        assert engine.move_budget("b") == 1.0 and evaluations("genmove b") == 8
        engine.handle("time_left w 21 0")  # (21 - 1) / 40 = 0.5 s
        assert engine.move_budget("w") == 0.5 and evaluations("genmove w") == 4
        # No time_left since: the engine took black's 1 s off black's clock itself.
        assert engine.clocks["b"] == clock.ClockState(40.0)
        assert engine.move_budget("b") == (40 - 1) / 39 and evaluations("genmove b") == 8
        engine.handle("time_settings 0 10 5")  # Canadian byo-yomi from the start: 10 s for 5 stones
        engine.handle("time_left w 10 5")  # (10 - 1) / 5 = 1.8 s: 15 evaluations reach it
        assert engine.move_budget("w") == 1.8 and evaluations("genmove w") == 15
        assert engine.clocks["w"] == clock.ClockState(10 - 15 * 0.125, 4)
        engine.handle("kgs-time_settings byoyomi 0 3 2")  # Japanese: each move has a 3 s period
        assert engine.move_budget("b") == 2.0 and evaluations("genmove b") == 16
        engine.handle("kgs-time_settings absolute 0")  # no time at all: one evaluation, a move on the priors
        assert engine.move_budget("b") == 0.0 and evaluations("genmove b") == 1
        assert engine.clocks["b"] == clock.ClockState(-0.125, 0, True)
        engine.handle("kgs-time_settings none")  # no limit: the fixed playouts again
        assert engine.move_budget("w") is None and evaluations("genmove w") <= 2
