"""The NumPy reference of Prism's ops, for backends that compute the same ops: its
implementations and the standard's argument rules it checks.

A backend computing an op on its own arrays raises, for a caller's mistake, the reference's
exception in the same words by calling the same checks, and hands the calls it does not take
to :func:`implementation`.  Besides: :func:`eig_real_when_real`, the argument rules in pure
Python (``transform_sizes``, ``negative_axis``, ``squeeze_axes``, ``check_indices``, ...) and
the manipulation functions over a namespace of NumPy's names (``take_in``, ...).  Importing it
imports no array library.  docs/writing-a-plugin.md, "Computing an op the reference computes".
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from prism_core._builtin.numpy_creation import arange_bounds, linspace_count
from prism_core._builtin.numpy_fft import Kind, frequency_args, shift_axes, transform_sizes
from prism_core._builtin.numpy_linalg import negative_axis, tensordot_axes
from prism_core._builtin.numpy_manipulation import (
    broadcast_arrays_in,
    check_bounds,
    check_indices,
    check_permutation,
    check_repeat_counts,
    check_repeats,
    permute_dims_in,
    repeat_count,
    repeat_in,
    squeeze_axes,
    squeeze_in,
    take_along_axis_axis,
    take_along_axis_in,
    take_axis,
    take_in,
    unstack_axis,
    unstack_in,
)
from prism_core._builtin.numpy_ops import FUNCTIONS

__all__ = [
    "Kind",
    "arange_bounds",
    "broadcast_arrays_in",
    "check_bounds",
    "check_indices",
    "check_permutation",
    "check_repeat_counts",
    "check_repeats",
    "eig_real_when_real",
    "frequency_args",
    "implementation",
    "linspace_count",
    "negative_axis",
    "permute_dims_in",
    "repeat_count",
    "repeat_in",
    "shift_axes",
    "squeeze_axes",
    "squeeze_in",
    "take_along_axis_axis",
    "take_along_axis_in",
    "take_axis",
    "take_in",
    "tensordot_axes",
    "transform_sizes",
    "unstack_axis",
    "unstack_in",
]


def implementation(op: str) -> Callable[..., Any]:
    """The NumPy reference implementation of the builtin op ``op`` (``"linalg.pinv"``), the
    function the ``numpy`` backend's variant runs; an unknown op is a ``KeyError`` naming it
    and where the ops are listed."""
    try:
        target = FUNCTIONS[op]
    except KeyError:
        raise KeyError(
            f"{op!r} is not a builtin op with a NumPy reference; prism_core.all_ops() lists "
            "the ops"
        ) from None
    import importlib

    module, _, attribute = target.partition(":")
    found: Any = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found  # type: ignore[no-any-return]


@functools.cache
def eig_real_when_real() -> bool:
    """Whether the reference's ``linalg.eig`` (``numpy.linalg.eig``) of a real matrix with real
    eigenvalues returns real arrays, as NumPy 2.4 and earlier do, rather than complex ones as
    the standard says and later NumPy releases do.  Asked of NumPy once (a 1 x 1 matrix)."""
    import numpy as np

    return bool(np.linalg.eig(np.eye(1)).eigenvalues.dtype.kind == "f")
