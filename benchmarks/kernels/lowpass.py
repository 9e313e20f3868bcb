"""An FFT low-pass filter: zero every frequency above the cut-off, transform back."""

from __future__ import annotations

from typing import Any

import numpy
import numpy as np

MUTATES = False


def kernel(signal: Any, dt: float, cutoff: float) -> Any:
    n = signal.shape[-1]
    spectrum = np.fft.rfft(signal)
    freqs = np.fft.rfftfreq(n, d=dt)
    spectrum = np.where(freqs <= cutoff, spectrum, 0.0)
    return np.fft.irfft(spectrum, n=n)


def example(n: int, dtype: str = "float64") -> tuple[Any, ...]:
    rng = numpy.random.default_rng(4)
    t = numpy.arange(n) * 1e-3
    clean = numpy.sin(2 * numpy.pi * 5.0 * t)
    return (clean + 0.3 * rng.standard_normal(n)).astype(dtype), 1e-3, 20.0
