"""Encoders: observations in, one feature vector per row out.

An encoder is any ``nn.Module`` with an ``out_dim`` attribute whose forward
takes the observation dict ``{key: [..., *shape]}`` and returns features
``[..., out_dim]`` for any leading shape (``[B]`` when acting, ``[T, B]`` when
training). ``default_encoder`` picks one per key from the observation spec:

- ``[C, H, W]`` floats: ``ConvEncoder`` (3x3 convolutions with max-pooling, then a linear layer);
- ``[C, H, W]`` uint8 (pixels, e.g. stacked Atari frames): ``PixelEncoder`` (the
  DQN/A3C convolutional torso, inputs scaled to [0, 1]);
- integer ``[L]`` with bounds (token sequences, e.g. a mission text): ``TokenEncoder``
  (embedding + GRU, its last hidden state);
- anything else: ``MLPEncoder`` over the flattened values.

and ``MultiEncoder`` concatenates the per-key features. A custom encoder drops
in wherever these do.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import Tensor, nn

from .layers import DirectSequential, Tanh

__all__ = [
    "ACTIVATIONS",
    "ConvEncoder",
    "MLPEncoder",
    "MultiEncoder",
    "ObsKey",
    "PixelEncoder",
    "TokenEncoder",
    "default_encoder",
    "obs_spec",
]

ACTIVATIONS = {"tanh": Tanh, "relu": nn.ReLU}


class ObsKey(NamedTuple):
    """What a model needs to know of one observation key."""

    shape: tuple[int, ...]
    dtype: np.dtype = np.dtype(np.float32)
    bounds: tuple[float, float] | None = None

    @property
    def is_image(self) -> bool:
        return len(self.shape) == 3 and self.dtype.kind == "f"

    @property
    def is_pixels(self) -> bool:
        return len(self.shape) == 3 and self.dtype == np.uint8

    @property
    def is_tokens(self) -> bool:
        return len(self.shape) == 1 and self.dtype.kind in "iu" and self.bounds is not None


def obs_spec(spec: Any) -> dict[str, ObsKey]:
    """Normalise an observation spec: a shape (the single key ``s``), or a mapping
    of key to a shape, an ``ObsKey`` or anything with ``shape``/``dtype``/``bounds``
    (the engine's ``KeySpec``)."""
    if not isinstance(spec, Mapping):
        return {"s": ObsKey(tuple(int(n) for n in spec))}
    out = {}
    for key, value in spec.items():
        if isinstance(value, ObsKey):
            out[key] = value
        elif hasattr(value, "shape"):
            bounds = getattr(value, "bounds", None)
            out[key] = ObsKey(tuple(value.shape), np.dtype(getattr(value, "dtype", np.float32)), bounds)
        else:
            out[key] = ObsKey(tuple(int(n) for n in value))
    return out


def _mlp(sizes: Sequence[int], activation: str) -> DirectSequential:
    layers: list[nn.Module] = []
    for n_in, n_out in itertools.pairwise(sizes):
        layers += [nn.Linear(n_in, n_out), ACTIVATIONS[activation]()]
    return DirectSequential(*layers)


def _lead(x: Tensor, ndim: int) -> tuple[int, ...]:
    return tuple(x.shape[: x.dim() - ndim])


class MLPEncoder(nn.Module):
    """Flatten and concatenate ``keys``, then ``layers`` x (Linear, activation)."""

    def __init__(
        self,
        spec: Mapping[str, ObsKey],
        keys: Sequence[str] | None,
        hidden: int,
        layers: int,
        activation: str,
    ) -> None:
        super().__init__()
        self.keys = tuple(keys if keys is not None else spec)
        self.ndims = tuple(len(spec[k].shape) for k in self.keys)
        size = sum(math.prod(spec[k].shape) for k in self.keys)
        sizes = [size] + [hidden] * layers
        self.mlp = _mlp(sizes, activation)
        self.out_dim = sizes[-1]

    def forward(self, obs: Mapping[str, Tensor]) -> Tensor:
        lead = _lead(obs[self.keys[0]], self.ndims[0])
        parts = [obs[k].reshape(*lead, -1).float() for k in self.keys]
        return self.mlp(parts[0] if len(parts) == 1 else torch.cat(parts, -1))


class ConvEncoder(nn.Module):
    """``[C, H, W]`` -> (3x3 conv, ReLU, 2x2 max-pool unless ``pool`` is false) per entry of
    ``channels`` -> Linear -> ReLU."""

    def __init__(self, key: str, shape: Sequence[int], channels: Sequence[int] = (32, 32), hidden: int = 256,
                 pool: bool = True) -> None:
        super().__init__()
        self.key = key
        c, h, w = shape
        layers: list[nn.Module] = []
        for n_out in channels:
            layers += [nn.Conv2d(c, n_out, 3, padding=1), nn.ReLU()]
            if pool and h >= 2 and w >= 2:
                layers.append(nn.MaxPool2d(2))
                h, w = h // 2, w // 2
            c = n_out
        self.conv = nn.Sequential(*layers)
        self.linear = nn.Sequential(nn.Linear(c * h * w, hidden), nn.ReLU())
        self.out_dim = hidden

    def forward(self, obs: Mapping[str, Tensor]) -> Tensor:
        x = obs[self.key]
        lead = _lead(x, 3)
        y = self.conv(x.reshape(-1, *x.shape[-3:]).float())
        return self.linear(y.flatten(1)).reshape(*lead, -1)


class PixelEncoder(nn.Module):
    """uint8 frames ``[C, H, W]`` -> /255 -> the convolutional torso of DQN
    (Mnih et al. 2015): 32 8x8 stride 4, 64 4x4 stride 2, 64 3x3 stride 1,
    ReLUs -> Linear -> ReLU. Frames of at least 36x36."""

    def __init__(self, key: str, shape: Sequence[int], hidden: int = 512) -> None:
        super().__init__()
        self.key = key
        c, h, w = shape
        if h < 36 or w < 36:
            raise ValueError(f"PixelEncoder needs frames of at least 36x36, '{key}' is {h}x{w}")
        self.conv = nn.Sequential(
            nn.Conv2d(c, 32, 8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(),
        )
        with torch.no_grad():
            size = self.conv(torch.zeros(1, c, h, w)).numel()
        self.linear = nn.Sequential(nn.Linear(size, hidden), nn.ReLU())
        self.out_dim = hidden

    def forward(self, obs: Mapping[str, Tensor]) -> Tensor:
        x = obs[self.key]
        lead = _lead(x, 3)
        y = self.conv(x.reshape(-1, *x.shape[-3:]).float() / 255.0)
        return self.linear(y.flatten(1)).reshape(*lead, -1)


class TokenEncoder(nn.Module):
    """Integer tokens ``[L]`` in ``[0, vocab)`` -> embedding -> GRU -> last hidden state."""

    def __init__(self, key: str, vocab: int, embed_dim: int = 32, hidden: int = 64) -> None:
        super().__init__()
        self.key = key
        self.embedding = nn.Embedding(vocab, embed_dim)
        self.gru = nn.GRU(embed_dim, hidden, batch_first=True)
        self.out_dim = hidden

    def forward(self, obs: Mapping[str, Tensor]) -> Tensor:
        tokens = obs[self.key]
        lead = _lead(tokens, 1)
        x = self.embedding(tokens.reshape(-1, tokens.shape[-1]).long())
        _, h = self.gru(x)
        return h[-1].reshape(*lead, -1)


class MultiEncoder(nn.Module):
    """Runs one encoder per part and concatenates their features."""

    def __init__(self, encoders: Mapping[str, nn.Module]) -> None:
        super().__init__()
        self.parts = nn.ModuleDict(encoders)
        self.out_dim = sum(int(e.out_dim) for e in self.parts.values())

    def forward(self, obs: Mapping[str, Tensor]) -> Tensor:
        features = [encoder(obs) for encoder in self.parts.values()]
        return features[0] if len(features) == 1 else torch.cat(features, -1)


def default_encoder(
    spec: Mapping[str, ObsKey],
    hidden: int,
    layers: int,
    activation: str,
    channels: str | Sequence[int],
    embed_dim: int,
    pool: bool = True,
) -> MultiEncoder:
    """One encoder per kind of key: conv for images (the DQN torso for uint8
    pixels), embedding + GRU for token sequences, one MLP over all the
    remaining (vector) keys; concatenated."""
    if isinstance(channels, str):
        channels = [int(c) for c in channels.split(",") if c.strip()]
    parts: dict[str, nn.Module] = {}
    vectors = []
    for key, entry in spec.items():
        if entry.is_pixels:
            parts[key] = PixelEncoder(key, entry.shape, hidden=8 * hidden)
        elif entry.is_image:
            parts[key] = ConvEncoder(key, entry.shape, channels, hidden=4 * hidden, pool=pool)
        elif entry.is_tokens:
            parts[key] = TokenEncoder(key, int(entry.bounds[1]) + 1, embed_dim, hidden)
        else:
            vectors.append(key)
    if vectors:
        parts["+".join(vectors)] = MLPEncoder(spec, vectors, hidden, layers, activation)
    return MultiEncoder(parts)
