"""The AlphaZero loop: self-play games searched in C++, one network that
evaluates their leaves in batches and learns from their records.

    python -m rlpytorch.alphazero --config examples/configs/go9.yaml

The game (e.g. ``go_mcts``) runs a tree search per game on the engine's
threads and sends the leaves it needs evaluated to the tag ``eval``; each
batch is one network call (``p = softmax over legal moves``, ``v``), replied
as the game's policy and value keys. The same batches carry the records of
the moves the searches played; when a game ends they get its outcome and go
to the replay window (``PositionReplay``). Between batches the network takes
``updates_per_batch`` SGD steps on minibatches drawn from the window (each
position under a random board symmetry), with ``PolicyValueLoss``.

New networks are used at once (AlphaZero), not gated by an evaluation match
(AlphaGo Zero): the next batch of leaves is evaluated by the weights just
updated. Resignation is the game's (its ``resign_threshold`` option); the
fraction of played-out games in which the would-be resigner won is reported
as ``false_resign``, the check that the threshold is safe (AlphaGo Zero kept
it under 5%).

The library names no game key: every key comes from the arguments (the
config file sets them for Go).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .args_provider import Arg, ArgsProvider, Configurable, format_config
from .game_loader import GameLoader
from .methods.policy_value import PolicyValueLoss
from .models.policy_value import PolicyValueNet, export_evaluator, masked_policy
from .position_replay import PositionReplay, RecordKeys, SelfPlayRecords

__all__ = ["AlphaZero", "main"]


class AlphaZero(Configurable):
    """Self-play, replay window and training, in one process."""

    args = (
        Arg("state_key", "", "leaf features the network reads"),
        Arg("legal_key", "", "leaf legal-move mask"),
        Arg("policy_reply", "", "reply key for the leaf's move probabilities"),
        Arg("value_reply", "", "reply key for the leaf's value"),
        Arg("record_state_key", "", "features of a searched position (records)"),
        Arg("visits_key", "", "visit distribution of a searched position"),
        Arg("move_key", "", "move played (-1: no record on this row)"),
        Arg("player_key", "", "sign of the mover (+1 / -1)"),
        Arg("resign_check_key", "", "resignation check on a game's last row (optional)"),
        Arg("num_frames", 200000, "leaf evaluations to run"),
        Arg("replay_size", 50000, "records in the replay window"),
        Arg("min_replay", 1000, "records before training starts"),
        Arg("sgd_batch", 256, "positions per SGD step"),
        Arg("updates_per_batch", 0.25, "SGD steps per evaluated batch (may be fractional)"),
        Arg("lr", 0.02, "SGD learning rate (momentum 0.9)"),
        Arg("weight_decay", 1e-4, "L2 regularisation"),
        Arg("symmetries", True, "augment each sampled position with a random board symmetry"),
        Arg("torch_threads", 1, "PyTorch's threads (the engine's threads search meanwhile; 0: PyTorch's default)"),
        Arg("log_every", 50, "SGD steps between progress lines"),
        Arg("checkpoint_dir", "checkpoints/alphazero", "where the network and its exported evaluator go"),
        Arg("export", True, "also save the network with torch.export (net.pt2, for GTP; takes ~10 s)"),
        Arg("game_writer", "", "module:Class called with each finished game, e.g. elfpy.go.sgf:SgfWriter"),
        Arg("games_dir", "", "folder for the game writer"),
    )

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        for arg in self.args:
            setattr(self, arg.name, config[arg.name])
        missing = [name for name in ("state_key", "legal_key", "policy_reply", "value_reply", "record_state_key",
                                     "visits_key", "move_key", "player_key") if not config[name]]
        if missing:
            raise ValueError(f"AlphaZero needs the game's key names: set {', '.join('--' + m for m in missing)}")
        self.loader = GameLoader.from_config(config)
        self.loss = PolicyValueLoss.from_config(config)
        self.rng = np.random.default_rng(config["seed"])
        torch.manual_seed(config["seed"])
        if self.torch_threads:
            torch.set_num_threads(self.torch_threads)

    def build(self) -> Any:
        """The context with its ``eval`` tag, the network, the window and the collector."""
        gc = self.loader.context()
        spec = gc.spec()
        for key in (self.state_key, self.legal_key, self.policy_reply, self.value_reply, self.record_state_key,
                    self.visits_key, self.move_key, self.player_key):
            if key not in spec:
                raise ValueError(f"game {self.loader.game!r} has no key {key!r}; its keys: {sorted(spec)}")
        planes_shape = tuple(spec[self.record_state_key].shape)
        self.num_actions = int(spec[self.policy_reply].shape[0])
        self.net = PolicyValueNet(planes_shape[0], planes_shape[-1], self.num_actions,
                                  self.config["channels"], self.config["blocks"])
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=self.lr, momentum=0.9,
                                         weight_decay=self.weight_decay)
        self.replay = PositionReplay(self.replay_size, planes_shape, self.num_actions)
        keys = RecordKeys(self.record_state_key, self.visits_key, self.move_key, self.player_key,
                          self.resign_check_key)
        self.records = SelfPlayRecords(keys, self.replay, self._game_writer(spec))
        inputs = [self.state_key, self.legal_key, self.record_state_key, self.visits_key, self.move_key,
                  self.player_key, keys.reward, keys.terminal] + ([self.resign_check_key] if self.resign_check_key
                                                                 else [])
        gc.add_tag("eval", self.loader.actor_batch, inputs, [self.policy_reply, self.value_reply])
        gc.reg_callback("eval", self.evaluate)
        self.frames = 0
        return gc

    def _game_writer(self, spec: dict) -> Any:
        if not self.game_writer:
            return None
        module, _, name = self.game_writer.partition(":")
        writer = getattr(importlib.import_module(module), name)
        return writer(self.games_dir or str(Path(self.checkpoint_dir) / "games"), **self.loader.options)

    def evaluate(self, batch: Any) -> dict[str, torch.Tensor]:
        """One network call for a batch of leaves; collects the batch's records."""
        self.records.add_batch(batch, batch.game_ids)
        self.net.eval()
        with torch.inference_mode():
            logits, value = self.net(torch.from_numpy(batch[self.state_key]))
            policy = masked_policy(logits, torch.from_numpy(batch[self.legal_key]))
        self.frames += len(batch)
        return {self.policy_reply: policy, self.value_reply: value}

    def update(self) -> dict[str, float]:
        """One SGD step on a minibatch from the window."""
        planes, pi, z = self.replay.sample(self.sgd_batch, self.rng, self.symmetries)
        self.net.train()
        logits, value = self.net(planes)
        loss, stats = self.loss(logits, value, torch.ones_like(pi), pi, z)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.net.increment_step()
        return {"loss": loss.item(), **stats}

    def run(self) -> list[dict[str, float]]:
        """Plays and trains for ``num_frames`` leaf evaluations; returns one
        entry per ``log_every`` steps (and a last one)."""
        gc = self.build()
        history: list[dict[str, float]] = []
        window: list[dict[str, float]] = []
        owed = 0.0
        start = time.perf_counter()
        with gc:
            while self.frames < self.num_frames:
                gc.run()
                if self.replay.size < self.min_replay:
                    continue
                owed += self.updates_per_batch
                while owed >= 1:
                    owed -= 1
                    window.append(self.update())
                    if len(window) == self.log_every:
                        history.append(self._log(window, start))
                        window = []
        if window:
            history.append(self._log(window, start))
        self.save()
        return history

    def _log(self, window: list[dict[str, float]], start: float) -> dict[str, float]:
        s = self.records.stats
        entry = {k: float(np.mean([w[k] for w in window])) for k in window[0]}
        entry.update(step=self.net.step, frames=self.frames, seconds=time.perf_counter() - start, games=s.games,
                     moves_per_game=s.moves / max(1, s.games), first_player_win=s.first_player_wins / max(1, s.games),
                     resigned=s.resigned, false_resign=s.false_resign_rate, replay=self.replay.size)
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in entry.items()), flush=True)
        return entry

    def save(self) -> None:
        """``net.pt`` (weights, step, arguments) and ``net.pt2`` (the exported
        evaluator a GTP player loads)."""
        folder = Path(self.checkpoint_dir)
        folder.mkdir(parents=True, exist_ok=True)
        self.net.save(folder / "net.pt", self.config)
        if not self.export:
            return
        planes = torch.zeros((2, *self.replay.planes.shape[1:]), dtype=torch.uint8)
        legal = torch.ones((2, self.num_actions), dtype=torch.uint8)
        export_evaluator(self.net, planes, legal, str(folder / "net.pt2"))


def main(argv: Sequence[str] | None = None) -> list[dict[str, float]]:
    provider = ArgsProvider([GameLoader, AlphaZero, PolicyValueLoss, PolicyValueNet],
                            description="AlphaZero: self-play search in C++, training in PyTorch")
    config = provider.parse(argv)
    print(format_config(config), flush=True)
    return AlphaZero(config).run()


if __name__ == "__main__":
    main()
