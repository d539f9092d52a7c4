"""``PolicyValueNet``: AlphaZero's residual tower with a policy and a value head.

Input: feature planes ``[B, C, N, N]`` (any dtype; cast to float) and the
legal-move mask ``[B, A]`` (``A = N * N + extra`` moves: one per board point,
row-major, then the extra moves such as a pass). Output: ``logits`` over the
moves (illegal ones set to -inf by ``probabilities``) and ``value`` in
[-1, 1] for the side to move.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from elfpy.files import write_atomically

from ..core.args_provider import Configurable, at_least, setting
from .base import Model

__all__ = ["PolicyValueNet", "PolicyValueSettings", "export_evaluator", "masked_policy"]


class _Residual(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: Tensor) -> Tensor:
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(h)))


def masked_policy(logits: Tensor, legal: Tensor) -> Tensor:
    """softmax over the legal moves only: ``p_a = legal_a e^{l_a} / sum_b legal_b e^{l_b}``."""
    return torch.softmax(logits.masked_fill(legal == 0, float("-inf")), dim=-1)


@dataclass
class PolicyValueSettings(Configurable):
    """The size of ``PolicyValueNet``'s tower."""

    channels: int = setting(32, "channels of the residual tower", bounds=at_least(1))
    blocks: int = setting(3, "residual blocks", bounds=at_least(0))


class PolicyValueNet(Model):
    """conv 3x3 -> ``blocks`` residual blocks -> policy head (1x1 conv, 2
    channels, linear to the A moves) and value head (1x1 conv, 1 channel,
    linear 64, ReLU, linear 1, tanh).

    Not in ``models.loader.MODELS``: it reads board planes of a known size, not
    an observation spec, and its ``channels`` (an int) is not the spec models'
    ``channels`` (a list)."""

    name = "policy_value"
    Settings: ClassVar[type[PolicyValueSettings]] = PolicyValueSettings

    def __init__(self, in_planes: int, board_size: int, num_actions: int,
                 settings: PolicyValueSettings | None = None) -> None:
        super().__init__()
        settings = settings or PolicyValueSettings()
        channels, blocks = settings.channels, settings.blocks
        self.board_size = board_size
        self.stem = nn.Sequential(nn.Conv2d(in_planes, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU())
        self.tower = nn.Sequential(*[_Residual(channels) for _ in range(blocks)])
        area = board_size * board_size
        self.policy_head = nn.Sequential(nn.Conv2d(channels, 2, 1, bias=False), nn.BatchNorm2d(2), nn.ReLU(),
                                         nn.Flatten(), nn.Linear(2 * area, num_actions))
        self.value_head = nn.Sequential(nn.Conv2d(channels, 1, 1, bias=False), nn.BatchNorm2d(1), nn.ReLU(),
                                        nn.Flatten(), nn.Linear(area, 64), nn.ReLU(), nn.Linear(64, 1), nn.Tanh())

    def forward(self, planes: Tensor) -> tuple[Tensor, Tensor]:
        h = self.tower(self.stem(planes.float()))
        return self.policy_head(h), self.value_head(h).squeeze(-1)


class ExportedEvaluator(nn.Module):
    """What a player runs: ``(planes, legal) -> (masked policy, value)``."""

    def __init__(self, net: PolicyValueNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, planes: Tensor, legal: Tensor) -> tuple[Tensor, Tensor]:
        logits, value = self.net(planes)
        return masked_policy(logits, legal), value


def export_evaluator(net: PolicyValueNet, planes: Tensor, legal: Tensor, path: str | Path) -> None:
    """Saves ``ExportedEvaluator(net)`` with torch.export (any batch size), so a
    player can load it without this library, written whole or not at all.

    The file holds no pickle: the example inputs, which torch.export.save
    would pickle, are left out, and the weights are raw tensor bytes. A
    player loads it with ``elfpy.network_file.load_network``, which refuses
    any file that could run code (``torch.export.load`` itself runs whatever
    a crafted file holds)."""
    import copy

    module = ExportedEvaluator(copy.deepcopy(net).cpu().eval())  # a player loads it on any machine
    batch = torch.export.Dim("batch", min=1, max=65536)
    program = torch.export.export(module, (planes, legal), dynamic_shapes=({0: batch}, {0: batch}))
    program.example_inputs = None
    write_atomically(path, lambda file: torch.export.save(program, file))
