"""What a split gives back: a :class:`SplitRecord` per call, a :class:`PartRecord` per part.

:func:`recording` collects the records of the splits that run in a block; a part that fails
or does not finish in time is a :class:`SplitError` naming its record.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from prism_core.kernel.errors import PrismError
from prism_core.kernel.public import home
from prism_core.kernel.quantities import seconds_text

__all__ = ["PartRecord", "SplitError", "SplitRecord", "recording", "split_recording"]


@home("prism_core.pipelines")
class SplitError(PrismError, RuntimeError):
    """A part of a split failed or did not finish in time.

    ``part`` is the :class:`PartRecord` of the part at fault (the first one, by index, when
    several failed); the cause is chained (``__cause__``).  The other parts were cancelled if
    they had not started, and awaited if they had: nothing runs on behind the error except a
    part that outlived ``timeout``, whose result is discarded.
    """

    def __init__(self, message: str, part: PartRecord | None = None) -> None:
        super().__init__(message)
        self.part = part


@home("prism_core.pipelines")
@dataclass(frozen=True)
class PartRecord:
    """One part of a split: where it ran and how long it took.

    ``start``/``stop`` index the split axis; a part of size 0 did not run (``seconds`` is
    ``None``).  ``backend`` is the backend that executed it (the reference's for a simulated
    device), ``variant`` the variant, ``device`` the device type it ran for and ``kind`` that
    device's kind; ``thread`` the name of the thread that ran it and ``threads`` the thread
    count its backend was limited to (``None``: not limited).  ``transfer_s`` is the modelled
    time of moving the part's arrays to its target and its result back, at the peak one-way
    bandwidth of the links the description gives (``links``, docs/device-files.md), along
    ``transfer`` (the path in words; for a part that did not run, the path its data would have
    taken); ``None`` when nothing moves or it is not known.
    ``pinned``: the part's host arrays were staged through its backend's page-locked memory
    (docs/split.md, "Pinned host buffers").
    """

    index: int
    target: str
    backend: str | None
    device: str | None
    kind: str | None
    simulated: bool
    start: int
    stop: int
    ratio: float
    seconds: float | None
    thread: str | None = None
    threads: int | None = None
    variant: str | None = None
    transfer_s: float | None = None
    transfer: str | None = None
    pinned: bool = False

    @property
    def size(self) -> int:
        return self.stop - self.start

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "target": self.target,
            "backend": self.backend,
            "device": self.device,
            "kind": self.kind,
            "simulated": self.simulated,
            "start": self.start,
            "stop": self.stop,
            "size": self.size,
            "ratio": self.ratio,
            "seconds": self.seconds,
            "thread": self.thread,
            "threads": self.threads,
            "variant": self.variant,
            "transfer_s": self.transfer_s,
            "transfer": self.transfer,
            "pinned": self.pinned,
        }

    def describe(self) -> str:
        where = self.backend or "?"
        if self.device:
            where += f" on {self.device}"
        if self.simulated:
            where += ", simulated: ran on the reference"
        if self.seconds is None:
            timing = "skipped (size 0)" if self.size == 0 else "did not finish"
        else:
            timing = seconds_text(self.seconds)
            if self.thread:
                timing += f" in {self.thread}"
            if self.threads:
                timing += f" ({self.threads} thread{'s' * (self.threads != 1)})"
            if self.pinned:
                timing += ", staged through pinned memory"
        if self.transfer_s is not None:
            timing += f"; transfer ~{seconds_text(self.transfer_s)} modelled ({self.transfer})"
        return (
            f"part {self.index}: [{self.start}:{self.stop}] ({self.size}, "
            f"{self.ratio:.0%}) on {self.target} [{where}]: {timing}"
        )


@home("prism_core.pipelines")
@dataclass(frozen=True)
class SplitRecord:
    """One split call: the op, how it was cut, each part, and the times.

    ``axis`` and ``length`` are the split axis (as the op's rule counts it) and its length;
    ``how`` says what that axis is and how the parts joined; ``ratio_source`` what gave the
    ratio (``"given"``, ``"even"``, ``"measured"``, ``"modelled"``, or ``"even: <why>"`` when
    ``"auto"`` had nothing to go on); ``gather_s`` the time to join the parts, ``total_s`` the
    whole call's; ``note`` anything else (a call run whole, and why).  ``decision`` is what
    ``ratio="auto"`` decided, with the predicted times: ``"split: predicted 1.2 ms vs torch
    alone 2.5 ms (...)"``, ``"declined: predicted split 3.1 ms vs torch 2.5 ms (...)"`` (the
    whole call then ran on that target, the others' parts of size 0), or why nothing could be
    predicted; ``""`` for any other ratio.
    """

    op: str
    axis: int | None
    length: int | None
    how: str
    ratio_source: str
    parts: tuple[PartRecord, ...]
    gather_s: float
    total_s: float
    note: str = ""
    decision: str = ""

    @property
    def split(self) -> bool:
        """Whether more than one part ran."""
        return sum(p.seconds is not None for p in self.parts) > 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "axis": self.axis,
            "length": self.length,
            "how": self.how,
            "ratio_source": self.ratio_source,
            "parts": [p.as_dict() for p in self.parts],
            "gather_s": self.gather_s,
            "total_s": self.total_s,
            "note": self.note,
            "decision": self.decision,
        }

    def describe(self) -> str:
        head = f"{self.op}: "
        if self.axis is None:
            head += "ran whole"
        else:
            head += f"split along {self.how} (length {self.length}), ratio {self.ratio_source}"
        head += f"; {seconds_text(self.total_s)} in all, gather {seconds_text(self.gather_s)}"
        lines = [head]
        if self.decision:
            lines.append(f"  auto: {self.decision}")
        if self.note:
            lines.append(f"  note: {self.note}")
        lines.extend(f"  {p.describe()}" for p in self.parts)
        return "\n".join(lines)


#: The record lists of the :func:`recording` blocks in force in this context, outermost first.
_RECORDING: contextvars.ContextVar[tuple[list[SplitRecord], ...]] = contextvars.ContextVar(
    "prism_split_recording", default=()
)


@contextlib.contextmanager
def recording() -> Iterator[list[SplitRecord]]:
    """Collect the :class:`SplitRecord` of every split that runs in this block (in this thread
    or task, and the pipelines it runs), in the order they finish.  Blocks nest: a record goes
    to every block in force."""
    records: list[SplitRecord] = []
    token = _RECORDING.set((*_RECORDING.get(), records))
    try:
        yield records
    finally:
        _RECORDING.reset(token)


#: The public name of :func:`recording` (``prism_core.pipelines.split_recording``).
split_recording = recording


def _publish(record: SplitRecord) -> None:
    for records in _RECORDING.get():
        records.append(record)
