"""Explicit heat equation on a square plate: a Jacobi stencil updated in place."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = True


def kernel(u: Any, alpha: float, steps: int) -> Any:
    """``steps`` explicit steps of the 2-D heat equation on ``u`` (boundary fixed), in place;
    returns the plate's mean temperature."""
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (
            u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        )
    return np.mean(u)


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    rng = numpy.random.default_rng(0)
    u = rng.random((n, n)).astype(dtype)
    u[0, :] = 1.0
    return u, 0.2, 10
