"""Go clocks as GTP controllers set them, and the share of one a move may spend.

``TimeControl`` is a time system: GTP 2's ``time_settings`` (main time, then
Canadian byo-yomi: periods of so many seconds for so many stones) or KGS's
``kgs-time_settings`` (none, absolute, Japanese byo-yomi: so many periods of
so many seconds, one period used up by each move that overruns it, or
Canadian). ``ClockState`` is one side's clock as ``time_left`` reports it:
the seconds left, and ``stones``: 0 in main time, else the stones left in the
Canadian period, or the Japanese periods left (KGS's reading of time_left's
stones). ``spend`` is what a move's seconds do to a clock, ``move_budget`` the
seconds a search may spend on the next move.

The GTP engine (``elfpy.gtp``) budgets each ``genmove`` with these and keeps
its own clock between two ``time_left``; the match referee
(``elfpy.go.gnugo.play_game``) keeps both sides' clocks, as gogui-twogtp does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NO_LIMIT = "none"
ABSOLUTE = "absolute"
CANADIAN = "canadian"
BYOYOMI = "byoyomi"  # Japanese byo-yomi (KGS's name)
SYSTEMS = (NO_LIMIT, ABSOLUTE, CANADIAN, BYOYOMI)

# Seconds kept back from each move's budget for what the clock counts but the
# search does not: the answer's way to the controller, a server's network.
# KataGo's and Leela Zero's default lag buffer.
LAG_BUFFER = 1.0


@dataclass(frozen=True)
class ClockState:
    """One side's clock: `seconds` left in main time (`stones` 0) or in the
    byo-yomi period, `stones` the Canadian period's stones or the Japanese
    periods left; `out_of_time` once a move overran it (the game is lost)."""

    seconds: float
    stones: int = 0
    out_of_time: bool = False


@dataclass(frozen=True)
class TimeControl:
    """A time system: `main` seconds, then byo-yomi periods of `period`
    seconds, each for `stones` stones (Canadian) or `stones` periods of one
    move each (Japanese)."""

    system: str
    main: float = 0.0
    period: float = 0.0
    stones: int = 0

    def __post_init__(self) -> None:
        if self.system not in SYSTEMS:
            raise ValueError(f"time system must be one of {', '.join(SYSTEMS)}, got {self.system!r}")
        numbers = (self.main, self.period, self.stones)
        if not all(math.isfinite(x) and x >= 0 for x in numbers):
            raise ValueError(f"time settings must be finite and >= 0, got {numbers}")
        if self.system in (CANADIAN, BYOYOMI) and not (self.period > 0 and self.stones > 0):
            raise ValueError(f"{self.system} byo-yomi needs a period and stones (periods) > 0, got {numbers}")

    @classmethod
    def from_time_settings(cls, main: float, byo_yomi: float, stones: int) -> TimeControl:
        """GTP 2's ``time_settings main byo_yomi stones`` (section 4.2 of the
        spec): byo-yomi time 0 is absolute time; byo-yomi time with 0 stones
        is no time limit."""
        if byo_yomi == 0:
            return cls(ABSOLUTE, main)
        if stones == 0:
            return cls(NO_LIMIT)
        return cls(CANADIAN, main, byo_yomi, stones)

    def command(self) -> str:
        """The GTP command that sets this control (``kgs-time_settings`` for
        Japanese byo-yomi, which ``time_settings`` cannot say)."""
        if self.system == BYOYOMI:
            return f"kgs-time_settings byoyomi {self.main:g} {self.period:g} {self.stones}"
        if self.system == NO_LIMIT:
            return "time_settings 0 1 0"
        return f"time_settings {self.main:g} {self.period:g} {self.stones}"

    def start(self) -> ClockState:
        """A side's clock at the start of a game."""
        return ClockState(self.main)


def spend(control: TimeControl, clock: ClockState, seconds: float) -> ClockState:
    """`clock` after a move that took `seconds`."""
    if control.system == NO_LIMIT or clock.out_of_time:
        return clock
    if clock.stones == 0 or control.system == ABSOLUTE:  # in main time
        left = clock.seconds - seconds
        if left >= 0 or control.system == ABSOLUTE:
            return ClockState(left, 0, left < 0)
        seconds = -left  # the rest of the move falls in the first byo-yomi period
        clock = ClockState(control.period, control.stones)
    if control.system == CANADIAN:
        left = clock.seconds - seconds
        if left < 0:
            return ClockState(left, clock.stones, True)
        if clock.stones == 1:  # the period's last stone: the next period starts afresh
            return ClockState(control.period, control.stones)
        return ClockState(left, clock.stones - 1)
    # Japanese: a move within the period keeps it whole; each period overrun is used up
    overrun_periods = max(math.ceil(seconds / control.period) - 1, 0)
    periods = clock.stones - overrun_periods
    return ClockState(control.period, max(periods, 0), periods <= 0)


def moves_to_play(moves_played: int, board_size: int) -> int:
    """An estimate of the mover's moves still to come: half the points not yet
    played on (a Tromp-Taylor game is played until the board is settled), but
    never under a quarter of the board, so that a game outliving the estimate
    still has time for its last moves. Underestimates are safe: the budget is
    made again every move from the clock left."""
    area = board_size * board_size
    return max(area // 4, (area - moves_played) // 2)


def move_budget(control: TimeControl, clock: ClockState, moves_played: int, board_size: int,
                lag_buffer: float = LAG_BUFFER) -> float | None:
    """The seconds a search may spend on the next move (None: no limit). In
    main time: an even share of the main time left over the moves still to
    come (``moves_to_play``), less `lag_buffer` kept back once, plus the
    share of a byo-yomi period that each move has for certain (a Canadian
    period over its stones; a whole Japanese period), less `lag_buffer`. In
    a Canadian period: its seconds left over its stones left, less
    `lag_buffer`; in a Japanese period: the period less `lag_buffer`."""
    if control.system == NO_LIMIT:
        return None
    if clock.out_of_time:
        return 0.0
    if clock.stones == 0 or control.system == ABSOLUTE:
        share = max(clock.seconds - lag_buffer, 0.0) / moves_to_play(moves_played, board_size)
        if control.system == CANADIAN:
            share += max(control.period / control.stones - lag_buffer, 0.0)
        elif control.system == BYOYOMI:
            share += max(control.period - lag_buffer, 0.0)
        return share
    if control.system == CANADIAN:
        return max(clock.seconds - lag_buffer, 0.0) / clock.stones
    return max(clock.seconds - lag_buffer, 0.0)
