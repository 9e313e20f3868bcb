"""The dominant eigenpair of a symmetric matrix by power iteration."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = False


def kernel(A: Any, iters: int) -> Any:
    v = np.ones(A.shape[0], dtype=A.dtype)
    v = v / np.linalg.vector_norm(v)
    for _ in range(iters):
        w = A @ v
        v = w / np.linalg.vector_norm(w)
    return v @ (A @ v), v


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    rng = numpy.random.default_rng(6)
    q, _ = numpy.linalg.qr(rng.standard_normal((n, n)))
    eig = numpy.linspace(1.0, 2.0, n)
    eig[-1] = 4.0  # a clear gap: the iteration converges fast
    return ((q * eig) @ q.T).astype(dtype), 30
