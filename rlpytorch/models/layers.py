"""``DirectSequential``: the layer stack of the MLP encoders and the heads;
``Tanh``: ``nn.Tanh``, at about half the cost (forward and backward) on CPUs where
MKL's tanh is slow."""

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


def _mkl_tanh_is_slow(cpuinfo_path: str = "/proc/cpuinfo") -> bool:
    """True where torch's float32 tanh (MKL's vector tanh, ``vsTanh``) takes MKL's slow
    generic path: with MKL on an x86 CPU that is not Intel's. On the 2-core AMD EPYC a
    ``[512, 64]`` tanh took 69 us where sigmoid took 8; on the 2-core Xeon, whose
    ``torch.tanh`` runs ``mkl_vml_kernel_sTanh_Z0HAynn`` (perf), 9 us against 11."""
    if not torch.backends.mkl.is_available():
        return False  # e.g. aarch64 wheels: Sleef's vectorized tanh
    try:
        with open(cpuinfo_path, encoding="ascii", errors="replace") as cpuinfo:
            vendor = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("vendor_id")), None)
    except OSError:
        return False
    return vendor is not None and vendor != "GenuineIntel"


# Read once: the choice holds for the process, so a run's numbers do not depend on timing.
_SIGMOID_TANH = _mkl_tanh_is_slow()


class Tanh(nn.Module):
    """``nn.Tanh``; for float32 on a CPU where MKL's tanh is slow (``_mkl_tanh_is_slow``),
    computed as ``2 sigmoid(2x) - 1``.

    On the AMD EPYC that form made the forward and backward of a ``[512, 64]`` batch take
    45 us instead of 88 (one thread, torch 2.13), and a CartPole run trained about 1.09x
    the frames/s (the note "After the faster tanh",
    benchmarks/notes/2026-11-26-cartpole-training.md at commit eb22c8e). On the Xeon it is
    the other way: ``torch.tanh`` took the CartPole model's forward and backward at 512
    rows from 902 to 675 us. The absolute error of the sigmoid form is at most about 2e-7
    (torch's tanh: 3e-8), negligible beside float32 training noise; other dtypes (whose
    rounding near 0 would lose more) and other devices use ``torch.tanh``, as does a
    compiled model (``torch.compiler.is_compiling``): the compiler generates a vectorized
    tanh of its own, and with torch 2.11 the in-place sigmoid trick traced into a compiled
    graph gave wrong gradients on the CPU.
    """

    def forward(self, x: Tensor) -> Tensor:
        if (not _SIGMOID_TANH or x.device.type != "cpu" or x.dtype != torch.float32
                or torch.compiler.is_compiling()):
            return torch.tanh(x)
        if torch.is_grad_enabled() and x.requires_grad:
            return _TanhBySigmoid.apply(x)
        return _tanh_by_sigmoid(x)
