"""How busy the machine is with other work while Prism measures.

Timings taken while other processes compete for the CPUs are slower and noisier than the
machine's own, so ``prism bench`` measures the load before and during its run, says so when
the machine is busy, and takes more rounds there.  The figure is the CPU time that *other*
processes used, as a fraction of all the CPUs' time: the whole machine's busy time (Linux's
``/proc/stat``) less this process's own (``os.times``).  Where ``/proc/stat`` cannot be read
(macOS), the one-minute load average less this process's one running thread stands in; where
neither exists (Windows) the load is unknown (``None``).
"""

from __future__ import annotations

import os
import time

__all__ = ["BUSY", "MachineLoad"]

#: Other processes using more than this fraction of the CPUs make the machine busy.
BUSY = 0.25


def _cpu_count() -> int:
    return os.cpu_count() or 1


def _system_busy_seconds() -> float | None:
    """Seconds of CPU time the whole machine spent busy since boot, or ``None``."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(v) for v in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle and iowait
    try:
        hertz = os.sysconf("SC_CLK_TCK")
    except (AttributeError, ValueError, OSError):
        hertz = 100
    return (sum(ticks[:8]) - idle) / hertz  # guest time is counted in user time already


def _own_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class MachineLoad:
    """Samples of the other processes' share of the CPUs.

    :meth:`sample` returns the share since the previous sample (or since the meter was made);
    :attr:`before` is the share over a short look taken when the meter is made, and
    :attr:`peak` the largest sample since.
    """

    def __init__(self, look_s: float = 0.2) -> None:
        self._mark = self._read()
        self.samples: list[float] = []
        if look_s > 0:
            time.sleep(look_s)
        self.before = self.sample()
        self.samples.clear()

    def _read(self) -> tuple[float, float | None, float]:
        return time.perf_counter(), _system_busy_seconds(), _own_seconds()

    def sample(self) -> float | None:
        """The other processes' share of all CPUs since the last sample, or ``None`` when it
        cannot be known here."""
        then_wall, then_busy, then_own = self._mark
        self._mark = now = self._read()
        wall = now[0] - then_wall
        if now[1] is not None and then_busy is not None and wall > 0:
            others = (now[1] - then_busy) - (now[2] - then_own)
            share = max(0.0, others / (wall * _cpu_count()))
        else:
            try:
                load = os.getloadavg()[0]
            except (AttributeError, OSError):
                return None
            share = max(0.0, load - 1.0) / _cpu_count()
        share = min(share, 1.0)
        self.samples.append(share)
        return share

    @property
    def peak(self) -> float | None:
        return max(self.samples) if self.samples else None

    @staticmethod
    def is_busy(share: float | None) -> bool:
        return share is not None and share > BUSY

    @property
    def busy(self) -> bool:
        """Whether other processes made the machine busy before or during the run."""
        return any(self.is_busy(s) for s in (self.before, *self.samples))

    def as_dict(self) -> dict[str, object]:
        """The load as ``prism bench --json`` reports it."""
        return {
            "cpus": _cpu_count(),
            "others_before": self.before,
            "others_peak": self.peak,
            "busy": self.busy,
            "busy_above": BUSY,
        }

    def describe(self) -> str:
        """One line for the header of ``prism bench``."""
        if self.before is None:
            return "machine load: unknown here"
        text = f"other processes used {self.before:.0%} of the {_cpu_count()} CPUs before"
        if self.peak is not None:
            text += f", at most {self.peak:.0%} during"
        if self.busy:
            return (
                f"machine busy: {text}; the cases measured while it was busy took more rounds, "
                "and the times are less certain"
            )
        return f"machine load: {text}"
