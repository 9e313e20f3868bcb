"""A histogram of normalised samples, and the cumulative distribution from it."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = False


def kernel(x: Any, bins: int) -> Any:
    lo, hi = np.min(x), np.max(x)
    scaled = (x - lo) / (hi - lo)
    counts, _ = np.histogram(scaled, bins=bins, range=(0.0, 1.0))
    return counts, np.cumulative_sum(counts)


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    rng = numpy.random.default_rng(5)
    return rng.standard_normal(n).astype(dtype), 16
