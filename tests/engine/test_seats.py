"""Seats: the two-seat `duel` game, each seat on its own tag or both on one.

Each round both seats pick a number in [0, 3); the higher pick earns +1 and
the lower -1. A seat observes (its seat, the opponent's last pick, round).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

import elfpy

ROUNDS = 4


def pick(game: int, seat: int, row: int) -> int:
    """Each seat's pick, a fixed function of the game, seat and its row number."""
    return (game * 7 + row * (seat + 1) + seat) % 3


class Referee:
    """Replies picks for each seat and checks every row against the rules."""

    def __init__(self) -> None:
        self.rows = defaultdict(int)  # (game, seat) -> rows seen
        self.picks = {}  # (game, seat, row) -> pick
        self.rewards = {}  # (game, seat, row) -> reward on that row
        self.returns = defaultdict(float)  # (game, seat) -> return of the episode so far
        self.finished = defaultdict(list)  # (game, seat) -> returns of finished episodes

    def reply(self, batch) -> dict:
        picks = []
        for b, (game, seat) in enumerate(zip(batch.game_ids.tolist(), batch.seats.tolist(), strict=True)):
            row = self.rows[(game, seat)]
            s, r, terminal = batch["s"][b], float(batch["r"][b]), bool(batch["terminal"][b])
            assert s[0] == seat, (game, seat, row)
            assert s[2] == row % ROUNDS, (game, seat, row)
            assert terminal == (row > 0 and row % ROUNDS == 0), (game, seat, row)
            if row > 0:
                mine, theirs = self.picks[(game, seat, row - 1)], self.picks[(game, 1 - seat, row - 1)]
                assert r == np.sign(mine - theirs), (game, seat, row, mine, theirs, r)
                assert s[1] == (-1 if terminal else theirs), (game, seat, row)
            else:
                assert r == 0 and s[1] == -1
            self.rewards[(game, seat, row)] = r
            self.returns[(game, seat)] += r
            if terminal:
                assert batch["episode_return"][b] == self.returns[(game, seat)], (game, seat, row)
                self.finished[(game, seat)].append(self.returns[(game, seat)])
                self.returns[(game, seat)] = 0.0
            self.picks[(game, seat, row)] = pick(game, seat, row)
            self.rows[(game, seat)] = row + 1
            picks.append(self.picks[(game, seat, row)])
        return {"a": np.array(picks, dtype=np.int64)}

    def check_zero_sum(self, num_games: int, min_rows: int) -> None:
        for game in range(num_games):
            rows = min(self.rows[(game, 0)], self.rows[(game, 1)])
            assert rows >= min_rows, (game, rows)
            wins = 0
            for row in range(rows):
                r0, r1 = self.rewards[(game, 0, row)], self.rewards[(game, 1, row)]
                assert r0 + r1 == 0, (game, row, r0, r1)
                wins += r0 != 0
            assert wins > 0  # the picks do differ, so the check is not vacuous
            episodes = min(len(self.finished[(game, 0)]), len(self.finished[(game, 1)]))
            for first, second in zip(
                self.finished[(game, 0)][:episodes], self.finished[(game, 1)][:episodes], strict=True
            ):
                assert first + second == 0, (game, first, second)


@pytest.mark.timeout(60)
def test_each_seat_on_its_own_tag_sees_only_its_seat_and_rewards_follow_picks():
    num_games = 6
    gc = elfpy.GameContext("duel", num_games=num_games, num_threads=2, seed=0, rounds=ROUNDS)
    assert gc.num_seats == 2
    gc.add_tag("actor0", batch_size=3, inputs=["s", "r", "terminal", "episode_return"], replies=["a"], seats=[0])
    gc.add_tag("actor1", batch_size=6, inputs=["s", "r", "terminal", "episode_return"], replies=["a"], seats=[1])
    referee = Referee()
    tags = defaultdict(int)

    def callback(batch):
        tags[batch.tag] += 1
        np.testing.assert_array_equal(batch.seats, 0 if batch.tag == "actor0" else 1)
        return referee.reply(batch)

    gc.reg_callback("actor0", callback)
    gc.reg_callback("actor1", callback)
    with gc:
        for _ in range(60):
            gc.run()
    assert tags["actor0"] > 0 and tags["actor1"] > 0
    referee.check_zero_sum(num_games, min_rows=ROUNDS + 2)


@pytest.mark.timeout(60)
def test_seats_sharing_one_tag_are_told_apart_by_batch_seats():
    num_games = 5
    gc = elfpy.GameContext("duel", num_games=num_games, num_threads=2, seed=0, rounds=ROUNDS)
    gc.add_tag("actor", batch_size=4, inputs=["s", "r", "terminal", "episode_return"], replies=["a"])
    referee = Referee()
    seen_seats = set()
    with gc:
        for i, batch in enumerate(gc):
            seen_seats |= set(batch.seats.tolist())
            np.testing.assert_array_equal(batch["s"][:, 0], batch.seats)
            pairs = list(zip(batch.game_ids.tolist(), batch.seats.tolist(), strict=True))
            assert len(set(pairs)) == len(pairs)
            batch.reply(referee.reply(batch))
            if i == 60:
                break
    assert seen_seats == {0, 1}
    referee.check_zero_sum(num_games, min_rows=ROUNDS + 2)


@pytest.mark.timeout(60)
def test_a_seat_train_tag_gets_windows_of_that_seat_only():
    gc = elfpy.GameContext("duel", num_games=4, num_threads=2, seed=0, rounds=ROUNDS)
    gc.add_tag("actor", batch_size=8, inputs=["s", "r", "terminal", "episode_return"], replies=["a"])
    gc.add_tag("train1", batch_size=4, T=3, inputs=["s", "a", "r", "terminal"], seats=[1])
    referee = Referee()
    checked = 0
    with gc:
        for batch in gc:
            if batch.tag == "actor":
                batch.reply(referee.reply(batch))
                continue
            np.testing.assert_array_equal(batch.seats, 1)
            np.testing.assert_array_equal(batch["s"][:, :, 0], 1)
            # Seat 1's reward follows its own pick (a, the row before) and
            # seat 0's pick (s[1], shown on the next row unless it is terminal).
            for t in range(1, 3):
                mine = batch["a"][t - 1]
                theirs = batch["s"][t, :, 1]
                ongoing = ~batch["terminal"][t]
                np.testing.assert_array_equal(batch["r"][t][ongoing], np.sign(mine - theirs)[ongoing])
                checked += int(ongoing.sum())
            if checked >= 40:
                break
    referee.check_zero_sum(4, min_rows=ROUNDS)


def test_seat_out_of_range_raises_value_error():
    gc = elfpy.GameContext("duel", num_games=2)
    with pytest.raises(ValueError, match="seat 2"):
        gc.add_tag("actor", batch_size=2, inputs=["s"], replies=["a"], seats=[2])


def test_a_seat_without_an_actor_raises_at_start():
    gc = elfpy.GameContext("duel", num_games=2)
    gc.add_tag("actor0", batch_size=2, inputs=["s"], replies=["a"], seats=[0])
    with pytest.raises(ValueError, match="seat 1"):
        gc.start()
    gc.stop()
