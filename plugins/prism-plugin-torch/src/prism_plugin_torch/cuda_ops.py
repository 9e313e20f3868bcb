"""The ``torch.cuda.<op>`` implementations: the functions of ``prism_plugin_torch.ops`` on the
GPU.

Array functions first move their array arguments to the current CUDA device (tensors on the CPU,
NumPy arrays, the arrays of a sequence such as ``stack``'s, arrays given by keyword such as
``clip``'s bounds), then compute there; the variants' ``can_run`` accepts host data only where a
GPU was named in scope (``prism_core.device(...)``), so that data is never moved unasked.
Creation functions make their tensors on the GPU.  Results stay on the GPU; ``to_numpy`` copies
them to the host.

Imported when dispatch first chooses a ``torch.cuda`` variant, which happens only where torch
can use CUDA (``TorchBackend.can_drive``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

from . import ops
from .backend import to_tensor

__all__ = ["CUDA", "on_gpu"]

CUDA = torch.device("cuda")


def _is_array(value: Any) -> bool:
    return isinstance(value, torch.Tensor) or hasattr(value, "__dlpack__")


def _gpu(value: Any) -> Any:
    """An argument on the GPU: arrays (and arrays in a list or tuple) moved, the rest (Python
    scalars, shapes, axes, subscripts) as it is."""
    if isinstance(value, torch.Tensor):
        return value if value.is_cuda else value.to(CUDA)
    if _is_array(value):
        return to_tensor(value, CUDA)
    if isinstance(value, (list, tuple)) and any(_is_array(v) for v in value):
        return type(value)(_gpu(v) for v in value)
    return value


def _result(value: Any) -> Any:
    """A result on the GPU: a call of Python scalars alone (``add(2, 3)``) computes on the CPU;
    its tensor moves (named tuples keep their type)."""
    if isinstance(value, torch.Tensor):
        return value if value.is_cuda else value.to(CUDA)
    if isinstance(value, tuple):
        items = [_result(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def on_gpu(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its array arguments moved to the GPU first, and its result there."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        out = fn(*[_gpu(a) for a in args], **{k: _gpu(v) for k, v in kwargs.items()})
        if type(out) is torch.Tensor and out.is_cuda:
            return out  # the common case, checked first
        return _result(out)

    return run


# -- creation, on the GPU -----------------------------------------------------------------------
asarray = functools.partial(ops.asarray_on, CUDA)
zeros = functools.partial(ops.zeros_on, CUDA)
ones = functools.partial(ops.ones_on, CUDA)
full = functools.partial(ops.full_on, CUDA)
triu_indices = functools.partial(ops.triu_indices_on, CUDA)
random_normal = functools.partial(ops.random_normal_on, CUDA)
#: Copies to the host (nothing to move first).
to_numpy = ops.to_numpy

# -- everything else, where the arrays are once on the GPU --------------------------------------
add = on_gpu(ops.add)
subtract = on_gpu(ops.subtract)
multiply = on_gpu(ops.multiply)
divide = on_gpu(ops.divide)
power = on_gpu(ops.power)
maximum = on_gpu(ops.maximum)
minimum = on_gpu(ops.minimum)
square = on_gpu(ops.square)
sqrt = on_gpu(ops.sqrt)
exp = on_gpu(ops.exp)
log = on_gpu(ops.log)
abs_ = on_gpu(ops.abs_)
real = on_gpu(ops.real)
conj = on_gpu(ops.conj)
where = on_gpu(ops.where)
clip = on_gpu(ops.clip)
sum_ = on_gpu(ops.sum_)
mean = on_gpu(ops.mean)
std = on_gpu(ops.std)
min_ = on_gpu(ops.min_)
max_ = on_gpu(ops.max_)
argmax = on_gpu(ops.argmax)
argmin = on_gpu(ops.argmin)
sort = on_gpu(ops.sort)
cumulative_sum = on_gpu(ops.cumulative_sum)
reshape = on_gpu(ops.reshape)
transpose = on_gpu(ops.transpose)
moveaxis = on_gpu(ops.moveaxis)
expand_dims = on_gpu(ops.expand_dims)
stack = on_gpu(ops.stack)
concat = on_gpu(ops.concat)
matmul = on_gpu(ops.matmul)
dot = on_gpu(ops.dot)
einsum = on_gpu(ops.einsum)
linalg_inv = on_gpu(ops.linalg_inv)
linalg_solve = on_gpu(ops.linalg_solve)
linalg_svd = on_gpu(ops.linalg_svd)
linalg_eig = on_gpu(ops.linalg_eig)
linalg_eigh = on_gpu(ops.linalg_eigh)
linalg_cholesky = on_gpu(ops.linalg_cholesky)
linalg_qr = on_gpu(ops.linalg_qr)
linalg_norm = on_gpu(ops.linalg_norm)
linalg_vector_norm = on_gpu(ops.linalg_vector_norm)
linalg_matrix_norm = on_gpu(ops.linalg_matrix_norm)
fft_fft = on_gpu(ops.fft_fft)
fft_ifft = on_gpu(ops.fft_ifft)
fft_rfft = on_gpu(ops.fft_rfft)
convolve = on_gpu(ops.convolve)
requires_grad = on_gpu(ops.requires_grad)
detach = on_gpu(ops.detach)
from_dlpack = on_gpu(ops.from_dlpack)

#: The Array API's other elementwise functions (``ops.ELEMENTWISE``), on the GPU: found by the
#: module's ``__getattr__`` (``round`` among them, which a global would make hide the builtin).
ELEMENTWISE: dict[str, Callable[..., Any]] = {
    op: on_gpu(fn) for op, fn in ops.ELEMENTWISE.items()
}


def __getattr__(name: str) -> Any:
    """The elementwise functions of :data:`ELEMENTWISE`, by their op's name."""
    try:
        return ELEMENTWISE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
