"""Matrix-free conjugate gradient for the 2-D Poisson equation (the 5-point Laplacian applied
by slicing, never formed)."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = False


def laplacian(v: Any) -> Any:
    """-Δv on the grid, zero Dirichlet boundary."""
    out = 4.0 * v
    out = out - np.concat((np.zeros_like(v[:1]), v[:-1]), axis=0)
    out = out - np.concat((v[1:], np.zeros_like(v[:1])), axis=0)
    out = out - np.concat((np.zeros_like(v[:, :1]), v[:, :-1]), axis=1)
    return out - np.concat((v[:, 1:], np.zeros_like(v[:, :1])), axis=1)


def kernel(b: Any, iters: int) -> Any:
    x = np.zeros_like(b)
    r = b - laplacian(x)
    p = r
    rs = np.sum(r * r)
    for _ in range(iters):
        ap = laplacian(p)
        alpha = rs / np.sum(p * ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = np.sum(r * r)
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x, np.sqrt(rs)


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    rng = numpy.random.default_rng(10)
    return rng.random((n, n)).astype(dtype), 25
