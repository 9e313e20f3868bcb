"""The array at the contract's boundary: what Prism reads of any backend's array.

Prism never computes on an array itself; it reads its shape and dtype to key, judge and route
a call, and hands it to a backend.  :class:`Array` is that much, as a structural type: NumPy's
``ndarray``, ``torch.Tensor``, CuPy's and JAX's arrays, MLX's and any Array API standard
array are ``Array`` s without naming it.  What a backend does with one beyond that is its own
(``Backend.to_numpy``, ``Backend.where``).
"""

from __future__ import annotations

from typing import Protocol

from prism_core.kernel.public import home

__all__ = ["Array"]


@home("prism_core.extending")
class Array(Protocol):
    """An array of some backend, as Prism reads it: its shape, dimensions and dtype."""

    @property
    def shape(self) -> tuple[int | None, ...]:
        """The size of each dimension (``None`` where a lazy library does not know it yet)."""
        ...

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        ...

    @property
    def dtype(self) -> object:
        """The library's own dtype object (``numpy.dtype``, ``torch.dtype``, ...)."""
        ...
