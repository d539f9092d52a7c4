"""``DirectSequential``: the layer stack of the MLP encoders and the heads."""

from __future__ import annotations

from torch import Tensor, nn

__all__ = ["DirectSequential"]


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
