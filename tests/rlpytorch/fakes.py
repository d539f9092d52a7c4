"""Helpers of the rlpytorch tests: loaders and contexts over the fake CartPole
engine, and seeded CartPole-shaped train windows."""

import torch
from fake_engine import FakeGameContext

from rlpytorch.core.game_loader import GameLoader
from rlpytorch.learners.trainer import Trainer


def fake_loader(num_games=8, T=5, **options):
    """A ``GameLoader`` whose contexts are fake CartPoles (one batch = all games)."""
    return GameLoader(
        num_games=num_games,
        actor_batch=num_games,
        train_batch=num_games,
        T=T,
        game_options=",".join(f"{k}={v}" for k, v in options.items()),
        context_factory=FakeGameContext,
    )


def fake_context(num_games=8, T=5, seed=0, train=True, state_size=0, **options):
    loader = fake_loader(num_games, T, **options)
    if train:
        return Trainer.add_tags(loader, loader.context(seed=seed), state_size)
    return loader.eval_context(num_games, seed=seed, state_size=state_size)


def cartpole_window(T=5, B=3, seed=0, terminal_rate=0.0, state_size=0):
    """A seeded CartPole-shaped train window: uniform behaviour policy, reward 1,
    terminals drawn at `terminal_rate`, and a zero recurrent state `h` if asked."""
    g = torch.Generator().manual_seed(seed)
    batch = {
        "s": torch.randn(T, B, 4, generator=g),
        "a": torch.randint(0, 2, (T, B), generator=g),
        "pi": torch.full((T, B, 2), 0.5),
        "r": torch.ones(T, B),
        "terminal": torch.rand(T, B, generator=g) < terminal_rate,
    }
    if state_size:
        batch["h"] = torch.zeros(T, B, state_size)
    return batch
