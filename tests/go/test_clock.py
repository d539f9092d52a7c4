"""Go clocks (elfpy.go.clock): the time systems GTP and KGS set, what a move's
time does to a clock, and the seconds a search may spend on a move."""

from __future__ import annotations

import pytest

from elfpy.go import clock
from elfpy.go.clock import ClockState, TimeControl, move_budget, spend
from elfpy.gtp import GtpEngine


def test_time_settings_reads_as_section_4_2_of_the_gtp_spec_says():
    assert TimeControl.from_time_settings(300, 0, 0) == TimeControl(clock.ABSOLUTE, 300)  # no byo-yomi time: absolute
    assert TimeControl.from_time_settings(300, 0, 25) == TimeControl(clock.ABSOLUTE, 300)
    assert TimeControl.from_time_settings(0, 1, 0) == TimeControl(clock.NO_LIMIT)  # byo-yomi time, no stones: no limit
    assert TimeControl.from_time_settings(300, 30, 5) == TimeControl(clock.CANADIAN, 300, 30, 5)


@pytest.mark.parametrize("settings", [(clock.NO_LIMIT,), (clock.ABSOLUTE, 0), (clock.ABSOLUTE, 300),
                                      (clock.CANADIAN, 300, 30, 5), (clock.BYOYOMI, 300, 30, 5),
                                      (clock.BYOYOMI, 0, 10, 1)])
def test_the_command_of_a_control_sets_the_same_control_in_the_engine(settings):
    """What the referee sends is what the engine then plays by."""
    control = TimeControl(*settings)
    with GtpEngine() as engine:
        assert engine.handle(control.command()) == ("= \n\n", False)
        assert engine.time_control == control
        assert engine.clocks == {"b": ClockState(control.main), "w": ClockState(control.main)}


@pytest.mark.parametrize("settings", [("fischer", 300), (clock.CANADIAN, 300, 30, 0), (clock.BYOYOMI, 300, 0, 5),
                                      (clock.ABSOLUTE, -1), (clock.ABSOLUTE, float("nan"))])
def test_a_control_that_cannot_be_played_is_refused(settings):
    with pytest.raises(ValueError):
        TimeControl(*settings)


def test_absolute_time_runs_out():
    control = TimeControl(clock.ABSOLUTE, 30)
    assert spend(control, control.start(), 10) == ClockState(20)
    assert spend(control, ClockState(20), 25) == ClockState(-5, 0, True)
    assert spend(control, ClockState(-5, 0, True), 1) == ClockState(-5, 0, True)  # lost stays lost


def test_canadian_byo_yomi_starts_when_main_time_is_spent_and_renews_its_periods():
    control = TimeControl(clock.CANADIAN, 10, 30, 3)
    in_byo_yomi = spend(control, ClockState(10), 12)  # 2 s of this move fell in the first period, its first stone
    assert in_byo_yomi == ClockState(28, 2)
    assert spend(control, in_byo_yomi, 8) == ClockState(20, 1)
    assert spend(control, ClockState(20, 1), 19) == ClockState(30, 3)  # the period's last stone: a new period
    assert spend(control, ClockState(20, 1), 21) == ClockState(-1, 1, True)


def test_japanese_byo_yomi_uses_up_a_period_for_each_one_a_move_overruns():
    control = TimeControl(clock.BYOYOMI, 10, 30, 3)
    assert spend(control, ClockState(10), 12) == ClockState(30, 3)  # 2 s into the first period: it stays whole
    assert spend(control, ClockState(30, 3), 30) == ClockState(30, 3)
    assert spend(control, ClockState(30, 3), 31) == ClockState(30, 2)
    assert spend(control, ClockState(30, 2), 61) == ClockState(30, 0, True)  # the last two periods: lost


def test_no_limit_never_runs_out_nor_limits_a_search():
    control = TimeControl(clock.NO_LIMIT)
    assert spend(control, control.start(), 1e9) == control.start()
    assert move_budget(control, control.start(), 0, 9) is None


def test_the_moves_still_to_come_are_half_the_points_left_and_at_least_a_quarter_of_the_board():
    assert clock.moves_to_play(0, 9) == 40 and clock.moves_to_play(1, 9) == 40 and clock.moves_to_play(41, 9) == 20
    assert clock.moves_to_play(80, 9) == 20 and clock.moves_to_play(0, 19) == 180 and clock.moves_to_play(300, 19) == 90


def test_a_move_budget_shares_main_time_and_keeps_the_byo_yomi_a_move_has_for_certain():
    # Main time: (41 s - the 1 s lag buffer) / 40 moves still to come, plus the byo-yomi each move has for certain.
    assert move_budget(TimeControl(clock.ABSOLUTE, 41), ClockState(41), 0, 9) == 1.0
    assert move_budget(TimeControl(clock.CANADIAN, 41, 30, 5), ClockState(41), 0, 9) == 1.0 + (30 / 5 - 1)
    assert move_budget(TimeControl(clock.BYOYOMI, 41, 30, 5), ClockState(41), 0, 9) == 1.0 + (30 - 1)
    assert move_budget(TimeControl(clock.ABSOLUTE, 41), ClockState(0.5), 0, 9) == 0.0  # less than the lag buffer left
    assert move_budget(TimeControl(clock.ABSOLUTE, 41), ClockState(21), 0, 9, lag_buffer=0.0) == 21 / 40
    # In a period: a Canadian period's time over its stones left; a whole Japanese period.
    assert move_budget(TimeControl(clock.CANADIAN, 41, 30, 5), ClockState(10, 4), 0, 9) == (10 - 1) / 4
    assert move_budget(TimeControl(clock.BYOYOMI, 41, 30, 5), ClockState(30, 2), 0, 9) == 29.0
    assert move_budget(TimeControl(clock.CANADIAN, 41, 30, 5), ClockState(-1, 4, True), 0, 9) == 0.0
