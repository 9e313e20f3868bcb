"""Gravitational accelerations of ``n`` bodies (softened), all pairs by broadcasting."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = False


def kernel(pos: Any, mass: Any, softening: float) -> Any:
    d = pos[np.newaxis, :, :] - pos[:, np.newaxis, :]  # d[i, j] = pos[j] - pos[i]
    r2 = np.sum(d**2, axis=-1) + softening**2
    inv_r3 = r2**-1.5
    return np.sum(d * (mass[np.newaxis, :] * inv_r3)[:, :, np.newaxis], axis=1)


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    rng = numpy.random.default_rng(2)
    return rng.standard_normal((n, 3)).astype(dtype), rng.random(n).astype(dtype), 0.1
