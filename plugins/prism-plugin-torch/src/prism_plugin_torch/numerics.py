"""Gradients and vectorisation with torch's own transforms: the ``torch`` backend's
:meth:`~prism_core.extending.Backend.value_and_grad` and :meth:`~prism_core.extending.Backend.vmap`
(imported by them: it imports torch).  The functions given to them compute with Prism's ops, which
dispatch
to torch for tensors, or with torch directly; torch.autograd records either."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .backend import to_tensor

__all__ = ["value_and_grad", "vmap"]


def _argnums(argnums: Any) -> tuple[tuple[int, ...], bool]:
    """``(positions, single)``: an int gives one position and a single gradient."""
    if isinstance(argnums, (tuple, list)):
        if not argnums:
            raise ValueError("value_and_grad: argnums must name at least one argument")
        return tuple(operator.index(i) for i in argnums), False
    try:
        return (operator.index(argnums),), True
    except TypeError:
        raise TypeError(
            f"value_and_grad: argnums must be an int or a tuple of ints, not {argnums!r}"
        ) from None


def _differentiable(value: Any, position: int) -> Any:
    """A leaf tensor tracking gradients, with ``value``'s data: tensors keep a floating-point
    dtype; NumPy arrays, Python numbers and integer tensors become float64 (complex128 for
    complex data), so that the gradients have the precision finite differences are checked
    against."""
    if isinstance(value, torch.Tensor):
        tensor = value
        if not (tensor.is_floating_point() or tensor.is_complex()):
            tensor = tensor.to(torch.float64)
    else:
        tensor = to_tensor(value)
        wanted = torch.complex128 if tensor.is_complex() else torch.float64
        if tensor.dtype != wanted:
            tensor = tensor.to(wanted)
    return tensor.detach().requires_grad_(True)


def value_and_grad(fn: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """A function returning ``(fn(*args, **kwargs), gradients)``, the gradients by
    ``torch.autograd.grad`` with respect to the positional arguments ``argnums``."""
    positions, single = _argnums(argnums)

    def run(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        for i in positions:
            if not -len(args) <= i < len(args):
                raise IndexError(
                    f"value_and_grad: argnums names argument {i}, but the function was called "
                    f"with {len(args)} positional arguments"
                )
        call = list(args)
        inputs = []
        for i in positions:
            call[i] = _differentiable(args[i], i)
            inputs.append(call[i])
        with torch.enable_grad():
            value = fn(*call, **kwargs)
            if not isinstance(value, torch.Tensor):
                raise TypeError(
                    "value_and_grad: fn must return a scalar computed from its arguments (a "
                    f"0-d tensor); it returned {type(value).__name__}"
                    + (
                        " (a NumPy array: compute with prism_core's ops or torch, not NumPy)"
                        if isinstance(value, (np.ndarray, np.generic))
                        else ""
                    )
                )
            if value.numel() != 1:
                raise ValueError(
                    "value_and_grad: fn must return a scalar; it returned an array of shape "
                    f"{tuple(value.shape)}"
                )
            if not value.requires_grad:
                grads: tuple[Any, ...] = tuple(torch.zeros_like(t) for t in inputs)
            else:
                found = torch.autograd.grad(value.reshape(()), inputs, allow_unused=True)
                grads = tuple(
                    torch.zeros_like(t) if g is None else g
                    for t, g in zip(inputs, found, strict=True)
                )
        return value.detach(), (grads[0] if single else grads)

    run.__name__ = f"value_and_grad({getattr(fn, '__name__', 'fn')})"
    return run


def vmap(fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0) -> Callable[..., Any]:
    """``fn`` vectorised by ``torch.func.vmap``; array arguments that are not tensors (NumPy
    arrays) become tensors first, sharing memory on the CPU."""
    mapped = torch.func.vmap(fn, in_dims=in_axes, out_dims=out_axes)

    def run(*args: Any, **kwargs: Any) -> Any:
        call = [
            to_tensor(a) if hasattr(a, "__dlpack__") and not isinstance(a, torch.Tensor) else a
            for a in args
        ]
        return mapped(*call, **kwargs)

    run.__name__ = f"vmap({getattr(fn, '__name__', 'fn')})"
    return run
