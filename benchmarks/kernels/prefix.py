"""Prefix sums: a moving average by differences of the running sum, and a running maximum
(a scan written as a loop over doubling strides)."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = False


def kernel(x: Any, window: int) -> Any:
    c = np.cumulative_sum(x, include_initial=True)
    moving = (c[window:] - c[:-window]) / window
    running = x
    stride = 1
    while stride < x.shape[0]:
        shifted = np.concat((running[:stride], running[:-stride]))
        running = np.maximum(running, shifted)
        stride *= 2
    return moving, running


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    rng = numpy.random.default_rng(9)
    return rng.standard_normal(n).astype(dtype), 8
