"""LU-style solve: forward substitution with a lower triangle, then back substitution with an
upper one, row by row (a loop of small dot products)."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = True  # fills its solution vectors element by element


def kernel(L: Any, U: Any, b: Any) -> Any:
    n = b.shape[0]
    y = np.zeros_like(b)
    for i in range(n):
        y[i] = (b[i] - L[i, :i] @ y[:i]) / L[i, i]
    x = np.zeros_like(b)
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - U[i, i + 1 :] @ x[i + 1 :]) / U[i, i]
    return x


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    rng = numpy.random.default_rng(1)
    a = rng.random((n, n)) / n
    L = (numpy.tril(a, -1) + numpy.eye(n)).astype(dtype)
    U = (numpy.triu(a, 1) + numpy.eye(n) * 2.0).astype(dtype)
    b = rng.random(n).astype(dtype)
    return L, U, b
