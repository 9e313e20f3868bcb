"""A clock on which only the work a test's variants declare takes time: the tuner's and the
bench's decisions, budgets and rounds become certain however busy the machine is."""

from __future__ import annotations

import threading
import time
from typing import Any


class VirtualClock:
    """Stands in for the ``time`` module of the tuner (and of ``prism bench``):
    ``perf_counter()`` advances only by what the variants spend (:meth:`advance`) and by a
    microsecond per reading (so that a loop that waits on it ends); everything else is the real
    ``time``."""

    def __init__(self) -> None:
        self._now = 0.0
        self._lock = threading.Lock()

    def perf_counter(self) -> float:
        return self.advance(1e-6)

    def advance(self, seconds: float) -> float:
        with self._lock:
            self._now += seconds
            return self._now

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)
