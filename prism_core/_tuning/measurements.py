"""A variant's measured times (:class:`Measurement`), and what they decide: whether one variant
is faster than another by a real margin (:func:`decide`: the median of paired rounds' ratios,
a sign test and the minimum) and how precisely a median is known (:func:`median_interval`).
The method and its thresholds: docs/performance.md, "Measuring".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prism_core.kernel.public import home

__all__ = ["Measurement", "decide", "median_interval"]


@home("prism_core.tuning")
@dataclass(frozen=True)
class Measurement:
    """One variant's times: seconds per call, the minimum and median over ``rounds``."""

    variant: str
    backend: str
    device: str | None
    seconds: float
    median: float
    samples: tuple[float, ...] = ()
    calls_per_sample: int = 0
    error: str | None = None
    #: Seconds of the first call measured, where the backend compiles per shape
    #: (``Backend.compiles``): a compilation at a new shape, which the times above exclude.
    first_call: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "backend": self.backend,
            "device": self.device,
            "seconds": None if self.error else self.seconds,
            "median": None if self.error else self.median,
            "rounds": len(self.samples),
            "calls_per_sample": self.calls_per_sample,
            "error": self.error,
            "first_call": self.first_call,
        }


def median_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """A 95 % interval of the median of ``values`` (the order statistics whose ranks a
    binomial with p = 1/2 puts around it; distribution-free), or ``None`` for fewer than 5."""
    ordered = sorted(values)
    count = len(ordered)
    if count < 5:
        return None
    k = max(int(count / 2 - 0.98 * math.sqrt(count)), 0)
    return ordered[k], ordered[count - 1 - k]


def _sign_test(wins: int, rounds: int) -> float:
    """The one-sided p-value of ``wins`` or more wins in ``rounds`` fair coin tosses."""
    return sum(math.comb(rounds, k) for k in range(wins, rounds + 1)) / 2.0**rounds


def decide(
    measurements: Sequence[Measurement],
    declared: str,
    *,
    threshold: float = 0.05,
    alpha: float = 0.05,
) -> tuple[str, str, float]:
    """``(winner, decided, gap)``: the fastest variant if it beats ``declared`` by a real
    margin, or ``declared`` if it is the fastest and beats the next by a real margin
    (``decided == "measured"`` both); else ``declared`` (``"tie"``).  ``gap`` is how much
    faster the fastest is than the declared first, as a fraction of the latter's time.

    A real margin: at least ``threshold`` in the median of the paired rounds' ratios, more
    paired wins than chance explains (sign test at ``alpha``), and faster at the minimum."""
    timed = [m for m in measurements if m.error is None]
    by_name = {m.variant: m for m in timed}
    if declared not in by_name:
        # The declared first could not be timed (it failed): the fastest of the rest wins.
        best = min(timed, key=lambda m: m.seconds)
        return best.variant, "measured", 0.0
    first = by_name[declared]
    best = min(timed, key=lambda m: (m.seconds, m.variant != declared))
    gap = 1.0 - best.seconds / first.seconds if first.seconds > 0 else 0.0
    if best.variant == declared:
        rivals = [m for m in timed if m.variant != declared]
        runner_up = min(rivals, key=lambda m: (m.seconds, m.variant)) if rivals else None
        if runner_up is None or _beats(first, runner_up, threshold=threshold, alpha=alpha):
            return declared, "measured", 0.0
        return declared, "tie", 0.0
    if _beats(best, first, threshold=threshold, alpha=alpha):
        return best.variant, "measured", gap
    return declared, "tie", gap


def _beats(fast: Measurement, slow: Measurement, *, threshold: float, alpha: float) -> bool:
    """Whether ``fast`` is faster than ``slow`` by a real margin (see :func:`decide`)."""
    pairs = [(b, f) for b, f in zip(fast.samples, slow.samples, strict=False) if f > 0]
    if not pairs:
        return False
    paired_gap = 1.0 - statistics.median(b / f for b, f in pairs)
    wins = sum(1 for b, f in pairs if b < f)
    significant = _sign_test(wins, len(pairs)) <= alpha
    # The paired rounds decide: each pair was measured at the same moment, so a drift of the
    # machine cancels out of its ratio.  The minimum only has to agree on the direction: with
    # few calls per sample (large memory-bound calls) it is itself noisy.
    return paired_gap >= threshold and significant and fast.seconds < slow.seconds
