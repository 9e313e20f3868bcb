"""A 2-D convolution layer (valid padding, bias, ReLU): loops over the kernel's offsets, each a
contraction over the input channels of a shifted slice."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = False


def kernel(x: Any, w: Any, b: Any) -> Any:
    c_out, _, kh, kw = w.shape
    h, wd = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((c_out, h, wd), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            out = out + np.tensordot(w[:, :, i, j], x[:, i : i + h, j : j + wd], axes=1)
    out = out + b[:, np.newaxis, np.newaxis]
    return np.maximum(out, 0.0)


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    rng = numpy.random.default_rng(3)
    x = rng.standard_normal((4, n, n)).astype(dtype)
    w = rng.standard_normal((8, 4, 3, 3)).astype(dtype)
    return x, w, rng.standard_normal(8).astype(dtype)
