"""``ModelInterface``: the named models of a run and their optimizers.

A typical actor-critic run holds two: ``model``, the learner that the
optimizer updates, and ``actor``, a lagging copy used for acting and refreshed
from the learner every N updates (the trainer decides when). Acting with a
frozen copy lets batched inference run while the learner changes; the
importance-sampling correction in ``PolicyGradient`` accounts for the lag.

How the models run is a setting of the interface, applied to every model it
registers (``run_as``), so the acting and the update paths of every method
get it: ``compile`` (``torch.compile`` of each call, forward and hence
backward; its ``reduce-overhead`` and ``max-autotune`` modes also replay CUDA
graphs on a GPU), ``amp`` (the forward under bf16 autocast, its outputs back
in float32, so that targets, returns, importance ratios and losses are
float32 maths) and ``channels_last`` (4-d weights stored NHWC, which makes
convolutions run channels-last). ``channels_last`` is on by default: on the
2-core Xeon (one torch thread, oneDNN's convolutions) a forward and backward
pass of the ``shared`` model at 512 rows took 16 ms against 23 NCHW on
MinAtar's 4x10x10, 111 against 146 at 256 rows on Atari's 4x84x84 and 36
against 55 on 22x20x20 planes, acting at 64 rows 0.75 against 1.67 ms on
MinAtar, and PPO on MinAtar Breakout trained at 1.28x the frames/s. The
others are off. On the CPU (2-core AMD EPYC, ``--config cartpole_fast``)
bf16 trained at 102-104K frames/s against 122-124K, and compiling took 3-20
s of a 0.6 s run. On an
H200 (``benchmarks/bench_gpu.py --compare``, synthetic batches) CUDA graphs
(``reduce-overhead``) gave 1.30x the frames/s of the eager CartPole 3 x 512
MLP and 1.09x of Pong's Nature CNN, 1.19x with bf16 and channels-last; plain
compilation and bf16 alone were slower than eager (0.8-0.94x). The loop there
is bound by the CPU (CPU seconds equal wall seconds), not by the kernels.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.utils import _pytree
from typing_extensions import Self

from ..core.args_provider import Bounds, Configurable, above, at_least, setting
from ..core.distributed import unwrap
from ..core.finite import check_finite_step, check_finite_weights
from .base import Model

__all__ = ["AMP_DTYPES", "COMPILE_MODES", "ModelInterface", "clip_grad_norm", "run_as"]

_OPTIMIZERS = ("adam", "rmsprop", "sgd")
# torch.compile's modes, and aot_eager: the capture (graphs, autograd) without generated code,
# which tells a capture problem from a code-generation one and compiles in a second on the CPU.
COMPILE_MODES = ("none", "default", "reduce-overhead", "max-autotune", "aot_eager")
_CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")
AMP_DTYPES = {"none": None, "bf16": torch.bfloat16}
_RECOMPILE_LIMIT = 64


@dataclass(eq=False)
class ModelInterface(Configurable):
    """Named models (``mi["model"]``), with an optimizer for the trained ones."""

    optimizer: str = setting("adam", "optimizer of the learner", choices=_OPTIMIZERS)
    lr: float = setting(1e-3, "learning rate", bounds=above(0))
    optim_eps: float = setting(1e-5, "epsilon of Adam / RMSprop", bounds=above(0))
    rmsprop_alpha: float = setting(0.99, "RMSprop's decay of the squared gradients' average", bounds=Bounds(0, 1))
    rmsprop_centered: bool = setting(False, "RMSprop divides by the gradients' variance, not their second "
                                            "moment (DQN's Nature settings: alpha 0.95, epsilon 0.01, centered)")
    weight_decay: float = setting(0.0, "L2 weight decay", bounds=at_least(0))
    compile: str = setting("none", "torch.compile every model's calls (forward, hence backward) with this mode; "
                                   "reduce-overhead and max-autotune also replay CUDA graphs on a GPU; aot_eager "
                                   "captures without generating code", choices=COMPILE_MODES)
    amp: str = setting("none", "run the models' forward passes under autocast to this dtype; their outputs "
                               "come back float32, so targets, returns, ratios and losses stay float32",
                       choices=tuple(AMP_DTYPES))
    channels_last: bool = setting(True, "store the models' 4-d weights channels-last (NHWC): convolutions "
                                        "then run channels-last, as oneDNN on the CPU and tensor cores prefer "
                                        "(--no-channels_last: NCHW)")

    def __post_init__(self) -> None:
        self.models: dict[str, Model] = {}
        self.optimizers: dict[str, torch.optim.Optimizer] = {}
        self._copy_pairs: dict[tuple[str, str], tuple[list[torch.Tensor], list[torch.Tensor]]] = {}
        # Walking a model's modules for its parameters took about 90 us a step
        # on the CartPole model, 3% of a training run: listed once (until ``to``).
        self._params: dict[str, list[torch.Tensor]] = {}

    def add_model(self, name: str, model: Model, optimize: bool = False) -> Model:
        """Register ``model`` under ``name``; ``optimize`` gives it an optimizer."""
        if name in self.models:
            raise KeyError(f"model {name!r} already registered")
        self.models[name] = model
        if self.channels_last:  # before the optimizer, whose state then takes the same layout
            model.to(memory_format=torch.channels_last)
        run_as(model, self.compile, self.amp)
        if optimize:
            self.optimizers[name] = self._make_optimizer(model)
        return model

    def _make_optimizer(self, model: Model) -> torch.optim.Optimizer:
        params = list(model.parameters())
        decay = self.weight_decay
        if self.optimizer == "rmsprop":
            return torch.optim.RMSprop(params, lr=self.lr, eps=self.optim_eps, alpha=self.rmsprop_alpha,
                                       centered=self.rmsprop_centered, weight_decay=decay)
        if self.optimizer == "adam":
            return _fused(torch.optim.Adam, params, lr=self.lr, eps=self.optim_eps, weight_decay=decay)
        return _fused(torch.optim.SGD, params, lr=self.lr, weight_decay=decay)

    def __getitem__(self, name: str) -> Model:
        return self.models[name]

    def __contains__(self, name: str) -> bool:
        return name in self.models

    def __iter__(self) -> Iterator[str]:
        return iter(self.models)

    def step(self, name: str, loss: torch.Tensor, grad_clip: float = 0.0) -> float:
        """One optimizer step of model ``name`` on ``loss``: back-propagate, clip
        the global gradient norm to ``grad_clip`` (0: no clipping), update.
        Returns the gradient norm before clipping. A non-finite loss or
        gradient norm raises ``NonFiniteError`` before any weight changes
        (``rlpytorch.core.finite``)."""
        optimizer = self.optimizers[name]
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        params = self._params.get(name)
        if params is None:
            params = self._params[name] = list(self.models[name].parameters())
        grad_norm = clip_grad_norm(params, grad_clip if grad_clip > 0 else math.inf)
        check_finite_step(name, loss, grad_norm)
        optimizer.step()
        return grad_norm

    def scale_lr(self, factor: float) -> None:
        """Set every optimizer's learning rate to ``factor * lr`` (for schedules)."""
        for optimizer in self.optimizers.values():
            for group in optimizer.param_groups:
                group["lr"] = self.lr * factor

    def update_model(self, dst: str, src: str) -> None:
        """Copy the weights and step of model ``src`` into model ``dst``."""
        pairs = self._copy_pairs.get((dst, src))
        if pairs is None:  # the parameters and buffers of both, paired once (until ``to``)
            dst_tensors = self[dst].state_dict(keep_vars=True).values()
            src_tensors = self[src].state_dict(keep_vars=True).values()
            pairs = self._copy_pairs[(dst, src)] = (list(dst_tensors), list(src_tensors))
            if len(pairs[0]) != len(pairs[1]):
                raise ValueError(f"models {dst!r} and {src!r} have different architectures")
        with torch.no_grad():
            torch._foreach_copy_(pairs[0], pairs[1])
        self[dst].step = self[src].step

    def state_dict(self) -> dict[str, Any]:
        """Every model's weights and step (a part such as a critic, a plain module,
        has no step), and every optimizer's state (on the CPU). Non-finite
        weights raise ``NonFiniteError``: this state goes into checkpoints."""
        models = {name: unwrap(model) for name, model in self.models.items()}
        weights = {name: {k: v.detach().cpu() for k, v in m.state_dict().items()} for name, m in models.items()}
        for name, tensors in weights.items():
            check_finite_weights(name, tensors)
        return {
            "models": weights,
            "steps": {name: m.step for name, m in models.items() if isinstance(m, Model)},
            "optimizers": {name: optimizer.state_dict() for name, optimizer in self.optimizers.items()},
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned, into models of the same names and architectures."""
        missing = sorted(set(self.models) - set(state["models"]))
        if missing:
            raise ValueError(f"the saved state has no models {missing} (it holds {sorted(state['models'])})")
        for name, model in self.models.items():
            model = unwrap(model)
            if isinstance(model, Model):
                model.load_weights(state["models"][name], source=f"saved model {name!r}")
                model.step = int(state["steps"][name])
            else:
                model.load_state_dict(state["models"][name])
        for name, optimizer in self.optimizers.items():
            optimizer.load_state_dict(state["optimizers"][name])

    def distribute(self) -> ModelInterface:
        """Wrap every optimized model for data-parallel training (``torch.distributed``
        initialized, e.g. by ``distributed.init_from_env``): rank 0's weights are
        broadcast, and backward averages the gradients over the ranks."""
        from ..core.distributed import DataParallelModel

        for name in self.optimizers:
            model = self.models[name]
            device = next(model.parameters()).device
            self.models[name] = DataParallelModel(model, device_ids=[device.index] if device.type == "cuda" else None)
        self._copy_pairs.clear()  # pairs are looked up through the wrapper now
        self._params.clear()
        return self

    def to(self, device: torch.device | str) -> ModelInterface:
        """Move every model (and hence its optimizer's parameters) to ``device``."""
        for model in self.models.values():
            model.to(device)
        self._copy_pairs.clear()  # buffers may be new tensors now
        self._params.clear()
        return self

    def add_actor_critic(self, model: Model) -> Self:
        """Add the usual pair: learner ``model`` (optimized) and its lagging ``actor`` copy."""
        self.add_model("model", model, optimize=True)
        actor = self.add_model("actor", model.clone())
        actor.requires_grad_(False)
        return self


def run_as(model: nn.Module, compile: str = "none", amp: str = "none") -> None:
    """Make every call of ``model`` run its forward under ``amp`` autocast
    (floating outputs cast back to float32) and compiled with ``torch.compile``
    mode ``compile`` (both "none": the plain forward; again: replaces what was set).

    Done as ``nn.Module.compile`` does it, through the module's
    ``_compiled_call_impl``: the model stays itself (parameters, checkpoint
    keys, attributes), and a copy or a pickle of it (``clone``, the model sent
    to a learner process) is plain again, as ``nn.Module.__getstate__`` drops
    the compiled call. With CUDA graphs (``reduce-overhead``, ``max-autotune``)
    the outputs are copied out of the graphs' memory, which the next replay
    overwrites: a method may keep a call's outputs (PPO's ``V_old``) past
    later calls."""
    call = model._call_impl
    if compile != "none":
        # Dynamo keeps its compiled variants per code object, so every model of a class shares
        # BranchModel.forward's: acting (inference tensors), a training window, PPO's minibatches,
        # no-grad values, evaluation. Past the limit (8) it would run the rest eager, unsaid.
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, _RECOMPILE_LIMIT)
    dtype = AMP_DTYPES[amp]
    if dtype is not None:
        call = _autocast(call, model, dtype)
    if compile == "aot_eager":
        call = torch.compile(call, backend="aot_eager")
    elif compile != "none":
        call = torch.compile(call, mode=compile)
        if compile in _CUDA_GRAPH_MODES:
            call = _copied_out(call)
    model._compiled_call_impl = None if call == model._call_impl else call


def _autocast(call: Any, model: nn.Module, dtype: torch.dtype) -> Any:
    """``call`` under autocast to ``dtype`` on the model's device, its floating outputs back to float32."""

    def autocast_call(*args: Any, **kwargs: Any) -> Any:
        device = next(model.parameters()).device.type  # read per call: the trainer may move the model
        with torch.autocast(device, dtype=dtype):
            out = call(*args, **kwargs)
        return _pytree.tree_map_only(torch.Tensor, _float32, out)

    return autocast_call


def _float32(x: torch.Tensor) -> torch.Tensor:
    return x.float() if x.is_floating_point() and x.element_size() < 4 else x


def _copied_out(call: Any) -> Any:
    """``call`` with its CUDA outputs copied (see ``run_as``)."""

    def copied_call(*args: Any, **kwargs: Any) -> Any:
        return _pytree.tree_map_only(torch.Tensor, lambda x: x.clone() if x.is_cuda else x, call(*args, **kwargs))

    return copied_call


def _fused(cls: type[torch.optim.Optimizer], params: list[torch.Tensor], **kwargs: Any) -> torch.optim.Optimizer:
    """``cls`` with its fused kernel, which updates every parameter in one call:
    for the small models of classic control, Python and dispatch per tensor
    dominate a step (Adam 54 us fused against 206 per tensor, SGD 19
    against 27, on the CartPole model). Same maths; an older torch or a device
    without the kernel gets the default implementation."""
    try:
        return cls(params, fused=True, **kwargs)
    except (RuntimeError, ValueError, TypeError):
        return cls(params, **kwargs)


def clip_grad_norm(parameters: Iterable[torch.Tensor], max_norm: float) -> float:
    """Scale the gradients so their global L2 norm is at most ``max_norm``;
    returns the norm before scaling (the maths of ``torch.nn.utils.clip_grad_norm_``).

    For gradients on one device with one dtype (a model's, as a rule) this is a
    handful of foreach ops; ``clip_grad_norm_`` regroups the tensors by device
    and dtype on every call, which costs small models more than the clipping.
    """
    parameters = [p for p in parameters if p.grad is not None]
    if not parameters:
        return 0.0
    grads = [p.grad for p in parameters]
    if len({(g.device, g.dtype) for g in grads}) > 1:
        return float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))
    norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    if max_norm < math.inf:
        torch._foreach_mul_(grads, (max_norm / (norm + 1e-6)).clamp(max=1.0))
    return norm.item()
