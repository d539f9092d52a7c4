"""Evaluation on a game of several seats counts every seat's episode, as
training's stats do (it once counted one seat per game: the first to finish)."""

import numpy as np

from rlpytorch.core.game_loader import GameLoader
from rlpytorch.models import MLPActorCritic
from rlpytorch.run.eval_iters import evaluate


def test_both_seats_of_a_zero_sum_duel_are_counted(one_torch_thread):
    loader = GameLoader(game="duel", num_games=4, actor_batch=4, num_threads=1)
    result = evaluate(MLPActorCritic((3,), 3), loader, eval_episodes=8, eval_sampler="multinomial",
                      progress=False, seed=3)
    returns = np.asarray(result.returns)
    # lanes in order: (game 0, seat 0), (game 0, seat 1), (game 1, seat 0), ...: the two seats of a
    # game play the same episode, so in a zero-sum game their returns cancel
    assert len(returns) == 8 and np.all(returns[0::2] + returns[1::2] == 0)
    assert np.any(returns != 0)  # a random policy wins and loses rounds: the check above can fail
