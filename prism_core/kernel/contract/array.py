"""The array at the contract's boundary: what Prism reads of any backend's array.  Prism never
computes on an array itself; it reads its shape and dtype to key, judge and route a call, and
hands it to a backend.  :class:`Array` is that much, as a structural type: NumPy's ``ndarray``,
``torch.Tensor``, CuPy's, JAX's, MLX's and any Array API standard array are ``Array`` s without
naming it.  What a backend does with one beyond that is its own (``Backend.to_numpy``)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from prism_core.kernel.public import home

__all__ = ["Array"]


@home("prism_core.extending")
@runtime_checkable
class Array(Protocol):
    """An array of some backend, as Prism reads it: its shape, dimensions and dtype
    (``isinstance(x, Array)`` asks whether ``x`` has them)."""

    @property
    def shape(self) -> tuple[int | None, ...]:
        """The size of each dimension (``None`` where a lazy library does not know it yet)."""
        ...

    @property
    def ndim(self) -> int: ...

    @property
    def dtype(self) -> object:
        """The library's own dtype object (``numpy.dtype``, ``torch.dtype``, ...)."""
        ...
