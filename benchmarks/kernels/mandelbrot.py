"""Escape-time counts of the Mandelbrot set on a grid."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = False


def kernel(re: Any, im: Any, maxiter: int) -> Any:
    c = re[np.newaxis, :] + 1j * im[:, np.newaxis]
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=np.int32)
    for _ in range(maxiter):
        inside = np.abs(z) <= 2.0
        z = np.where(inside, z * z + c, z)
        counts = counts + np.astype(inside, np.int32)
    return counts


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    return (
        numpy.linspace(-2.0, 0.5, n).astype(dtype),
        numpy.linspace(-1.25, 1.25, n).astype(dtype),
        20,
    )
