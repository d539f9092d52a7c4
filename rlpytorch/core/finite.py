"""Training that stays finite: ``NonFiniteError``, the error a run stops with
once a loss, a gradient or a model's weights turn NaN or infinite.

One NaN reaches every weight within an update or two, and a run that goes on
past it learns nothing while it looks healthy: the bar runs, the checkpoints
are written, the evaluation prints a score. So the one place that steps the
optimizers (``ModelInterface.step``) refuses a non-finite loss or gradient
norm before any weight takes that update, and writing a checkpoint
(``Model.save``, ``ModelInterface.state_dict``) refuses non-finite weights:
the last checkpoint on disk holds the last finite ones. ``rlpytorch.train``
prints the error as one line and exits with status 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

__all__ = ["NonFiniteError", "check_finite_step", "check_finite_weights"]


class NonFiniteError(RuntimeError):
    """A loss, a gradient or weights turned NaN or infinite; the message names the model."""


def check_finite_step(model: str, loss: torch.Tensor, grad_norm: float) -> None:
    """Raises ``NonFiniteError`` unless ``loss`` (a scalar) and the gradient norm
    of ``model``'s update are finite; call before the optimizer steps."""
    loss_value = loss.item()
    if math.isfinite(loss_value) and math.isfinite(grad_norm):
        return
    part = "loss" if not math.isfinite(loss_value) else "gradient"
    raise NonFiniteError(f"training stopped: the {part} of model {model!r} turned non-finite (loss {loss_value}, "
                         f"gradient norm {grad_norm}); no weight took that update and no checkpoint is written "
                         "on the way out")


def check_finite_weights(model: str, tensors: Mapping[str, torch.Tensor]) -> None:
    """Raises ``NonFiniteError`` naming ``model`` and the first tensor of
    ``tensors`` (a state dict) that holds a NaN or infinite value."""
    floating = [(name, tensor) for name, tensor in tensors.items() if tensor.is_floating_point()]
    if not floating:
        return
    finite = torch.stack([torch.isfinite(tensor).all() for _, tensor in floating])
    if bool(finite.all()):
        return
    name = floating[int((~finite).nonzero()[0])][0]
    raise NonFiniteError(f"training stopped: model {model!r} has non-finite weights ({name!r}); no checkpoint "
                         "of them is written")
