"""What a long measurement shows while it runs (``prism bench``, ``prism tune``,
``prism.tune``): the step at hand (op, dtype, size) and the time left, as a live bar on a
terminal (tqdm) and as plain lines elsewhere (a log, CI), so that a run is never silent."""

from __future__ import annotations

import time
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """A progress display, called as ``progress(done, total, label)`` before each step.

    ``mode`` is ``"bar"`` (tqdm, redrawn in place), ``"lines"`` (one line per step) or
    ``"off"``.  The time left is what the steps so far took on average times the steps left,
    and at most what is left before ``deadline`` (a ``time.perf_counter()`` value: the end
    of a ``--budget``)."""

    def __init__(
        self, stream: TextIO, mode: str, *, prefix: str = "", deadline: float | None = None
    ) -> None:
        self.stream = stream
        self.mode = mode
        self.prefix = prefix
        self.deadline = deadline
        self.began = time.perf_counter()
        self._bar: Any = None

    @classmethod
    def auto(
        cls, stream: TextIO, *, lines: bool, prefix: str = "", deadline: float | None = None
    ) -> Progress:
        """A bar on a terminal; elsewhere plain lines if ``lines``, else nothing."""
        isatty = getattr(stream, "isatty", None)
        mode = "bar" if isatty is not None and isatty() else ("lines" if lines else "off")
        return cls(stream, mode, prefix=prefix, deadline=deadline)

    def left(self, done: int, total: int) -> float | None:
        """Seconds left, estimated (``None`` before the first step is done, without a
        deadline)."""
        now = time.perf_counter()
        estimate = (now - self.began) / done * (total - done) if done else None
        if self.deadline is not None:
            cap = max(self.deadline - now, 0.0)
            estimate = cap if estimate is None else min(estimate, cap)
        return estimate

    def __call__(self, done: int, total: int, label: str) -> None:
        if self.mode == "off":
            return
        left = self.left(done, total) if done < total else None
        when = "" if left is None else f"about {_duration(left)} left"
        if self.mode == "lines":
            if done < total:
                tail = f" ({when})" if when else ""
                self.stream.write(f"{self.prefix}[{done + 1}/{total}] {label}{tail}\n")
                self.stream.flush()
            return
        if self._bar is None:
            from tqdm import tqdm  # type: ignore[import-untyped]

            self._bar = tqdm(
                total=total, file=self.stream, leave=False, unit="step", dynamic_ncols=True,
                bar_format="{desc} {bar} {n_fmt}/{total_fmt} {postfix}",
            )  # fmt: skip
        self._bar.total = total
        self._bar.n = done
        self._bar.set_description_str(label, refresh=False)
        self._bar.set_postfix_str(when, refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
