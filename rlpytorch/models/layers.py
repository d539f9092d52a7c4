"""``DirectSequential``: the layer stack of the MLP encoders and the heads;
``Tanh``: ``nn.Tanh`` at about half the cost (forward and backward) on the CPU."""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["DirectSequential", "Tanh"]


class DirectSequential(nn.Sequential):
    """An ``nn.Sequential`` whose forward calls each layer's ``forward`` directly.

    Calling a module costs a few microseconds of bookkeeping (hooks, tracing
    state), and a small model of classic control is mostly that: skipping it on
    the inner layers made a 64-row actor forward pass of the CartPole model
    about 13% faster (206 to 179 us). Hooks on the inner layers therefore do
    not run; hooks on the stack itself do.
    Parameters, indexing and checkpoint keys are those of ``nn.Sequential``.
    """

    def forward(self, x: Tensor) -> Tensor:
        for layer in self:
            x = layer.forward(x)
        return x


# The constants as 0-d float32 tensors: a Python number in a tensor op is first
# copied into a new tensor (about 2.5 us on the CPU), three times a call here; on a
# [64, 64] batch a call took 12 us with numbers and 7 with these (one thread, AMD EPYC,
# torch 2.13), the same bits out (x * 2 and y * 2 are exact either way).
_TWO = torch.tensor(2.0)
_ONE = torch.tensor(1.0)


def _tanh_by_sigmoid(x: Tensor) -> Tensor:
    return torch.sigmoid(x * _TWO).mul_(_TWO).sub_(_ONE)


class _TanhBySigmoid(torch.autograd.Function):
    """``tanh(x) = 2 sigmoid(2x) - 1``, with tanh's own backward on the output."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: Tensor) -> Tensor:  # type: ignore[override]
        y = _tanh_by_sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: Tensor) -> Tensor:  # type: ignore[override]
        (y,) = ctx.saved_tensors  # type: ignore[attr-defined]
        return torch.ops.aten.tanh_backward(grad, y)


class Tanh(nn.Module):
    """``nn.Tanh``, computed as ``2 sigmoid(2x) - 1`` for float32 on the CPU.

    Torch's CPU tanh kernel is not vectorized in the 2.13 wheel: on a
    ``[512, 64]`` float32 batch it took 69 us where sigmoid took 8 (AMD EPYC,
    one thread), and a quarter of a CartPole training run's CPU time under the
    torch profiler. Through sigmoid the forward and backward of that batch
    take 45 us instead of 88, and a CartPole run trained about 1.09x the
    frames/s (the note "After the faster tanh",
    benchmarks/notes/2026-11-26-cartpole-training.md at commit eb22c8e). The absolute
    error is at most about 2e-7 (torch's tanh: 3e-8), negligible beside
    float32 training noise; other dtypes (whose rounding near 0 would lose
    more) and other devices use ``torch.tanh``, as does a compiled model
    (``torch.compiler.is_compiling``): the compiler generates a vectorized
    tanh of its own, and with torch 2.11 the in-place sigmoid trick traced
    into a compiled graph gave wrong gradients on the CPU.
    """

    def forward(self, x: Tensor) -> Tensor:
        if x.device.type != "cpu" or x.dtype != torch.float32 or torch.compiler.is_compiling():
            return torch.tanh(x)
        if torch.is_grad_enabled() and x.requires_grad:
            return _TanhBySigmoid.apply(x)
        return _tanh_by_sigmoid(x)
