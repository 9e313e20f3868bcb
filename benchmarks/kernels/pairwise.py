"""A Gaussian (RBF) kernel matrix from pairwise squared distances (the Gram-matrix trick)."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = False


def kernel(X: Any, sigma: float) -> Any:
    sq = np.sum(X * X, axis=1)
    d2 = sq[:, np.newaxis] + sq[np.newaxis, :] - 2.0 * (X @ X.T)
    return np.exp(-np.maximum(d2, 0.0) / (2.0 * sigma**2))


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    rng = numpy.random.default_rng(7)
    return rng.standard_normal((n, 8)).astype(dtype), 2.0
