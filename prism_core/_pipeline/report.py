"""What a pipeline run did and what a pipeline plan says it would do: plain, frozen records.

The bottom of the pipeline layer: the stages and the pipeline fill these in; nothing here runs
anything.  A run gives a :class:`PipelineRun` (the result and a :class:`PipelineReport`, one
:class:`StageReport` per stage), a plan a :class:`PipelinePlan` (a :class:`PlannedCall` per op
call).  Every record has ``as_dict()`` (JSON-able) and ``describe()``.  Splits are read through
their ``as_dict()`` and ``describe()`` only, so that this module does not depend on the split
engine.  The fields: docs/pipelines.md, "The report" and "Planning a pipeline".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from prism_core.kernel.dispatch.movement import MoveRecord
from prism_core.kernel.errors import PrismError
from prism_core.kernel.public import home
from prism_core.kernel.quantities import seconds_text

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.decision import Decision

__all__ = [
    "MoveRecord",
    "PipelineError",
    "PipelinePlan",
    "PipelineReport",
    "PipelineRun",
    "PlannedCall",
    "PlannedStage",
    "StageFallback",
    "StageReport",
    "bytes_text",
]


@home("prism_core.pipelines")
class PipelineError(PrismError, RuntimeError):
    """A pipeline or stage that cannot run as written: stages entered inside stages, a strict
    stage none of whose preferences is available here, a stage pinned to an absent device
    found before anything ran (that one is a :class:`~prism_core.DeviceNotPresentError`)."""


def bytes_text(n: int | None) -> str:
    """``2097152`` -> ``"2.1 MB"`` (decimal units, as the device files give bandwidths)."""
    if n is None:
        return "?"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]
    out = []
    for r in (header, *rows):
        out.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return out


@home("prism_core.pipelines")
@dataclass(frozen=True)
class StageFallback:
    """A call in a stage that did not run where it was first meant to.

    Either dispatch fell back from a failing variant (automatic mode, as an op does:
    ``failed`` is the variant, ``instead`` the next candidate), or the stage's preferred
    placement could not run the call and, the stage being in automatic mode, it ran in the
    scope the stage was entered in (``failed`` is ``None`` when the placement has no variant
    for the op; ``instead`` is ``"automatic dispatch"``).
    """

    op: str
    failed: str | None
    error: str
    instead: str | None
    #: How many calls it happened to (a stage in a loop, an op called many times).
    count: int = 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "failed": self.failed,
            "error": self.error,
            "instead": self.instead,
            "count": self.count,
        }

    def describe(self) -> str:
        what = f"{self.failed} failed" if self.failed else "the stage's placement could not run it"
        instead = f"ran {self.instead} instead" if self.instead else "nothing was left to run it"
        times = f" ({self.count} calls)" if self.count > 1 else ""
        return f"{self.op}: {what} ({self.error}); {instead}{times}"


@home("prism_core.pipelines")
@dataclass(frozen=True)
class StageReport:
    """One stage of a run: where it ran and why, how long it took, what moved.

    ``placement`` says where, in words (``"backend torch"``, ``"device nvidia.h100-pcie
    (simulated)"``, ``"automatic"``); ``backend`` and ``device`` are the names behind it
    (``None``: not named, dispatch chose per call).  ``why`` says what decided it: the
    preference taken, a strategy's note, or why no preference could be taken; ``skipped`` lists
    each preference passed over with its reason.  ``runs`` counts how often the stage's block
    was entered in the run (a stage in a loop); ``seconds`` is its wall time over all runs,
    after waiting for the stage's backend to finish (``Backend.synchronize``).

    ``moves`` are the arrays dispatch moved while the stage ran: arguments taken to the backend
    that ran a call (``bytes_in``) and results brought back to the arguments' backend
    (``bytes_out``).  A stage whose backend takes the arrays it is given moves nothing.
    """

    name: str
    placement: str
    backend: str | None
    device: str | None
    simulated: bool
    dispatch: str
    why: str
    skipped: tuple[str, ...] = ()
    runs: int = 1
    seconds: float = 0.0
    moves: tuple[MoveRecord, ...] = ()
    fallbacks: tuple[StageFallback, ...] = ()
    splits: tuple[Any, ...] = ()
    error: str | None = None

    @property
    def bytes_in(self) -> int:
        """Bytes of the arguments moved to where the stage's calls ran."""
        return sum(m.nbytes or 0 for m in self.moves if m.position is not None)

    @property
    def bytes_out(self) -> int:
        """Bytes of the results brought back to their arguments' backend."""
        return sum(m.nbytes or 0 for m in self.moves if m.position is None)

    def merged(self, other: StageReport) -> StageReport:
        """This stage's record with a later run of the same stage added."""
        notes = self.skipped
        if other.placement != self.placement:
            notes = (*notes, f"run {self.runs + 1} ran on {other.placement}: {other.why}")
        return replace(
            self,
            skipped=notes,
            runs=self.runs + other.runs,
            seconds=self.seconds + other.seconds,
            moves=self.moves + other.moves,
            fallbacks=self.fallbacks + other.fallbacks,
            splits=self.splits + other.splits,
            error=self.error or other.error,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "placement": self.placement,
            "backend": self.backend,
            "device": self.device,
            "simulated": self.simulated,
            "dispatch": self.dispatch,
            "why": self.why,
            "skipped": list(self.skipped),
            "runs": self.runs,
            "seconds": self.seconds,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
            "moves": [m.as_dict() for m in self.moves],
            "fallbacks": [f.as_dict() for f in self.fallbacks],
            "splits": [s.as_dict() for s in self.splits],
            "error": self.error,
        }

    def describe(self) -> str:
        """The stage's details: why it ran where it ran, each move, fallback and split."""
        lines = [f"stage {self.name!r}: {self.placement} ({self.dispatch}): {self.why}"]
        lines.extend(f"  skipped: {s}" for s in self.skipped)
        lines.extend(f"  moved: {m.describe()}" for m in self.moves)
        lines.extend(f"  fallback: {f.describe()}" for f in self.fallbacks)
        for s in self.splits:
            text = s.describe()
            lines.extend(f"  split: {line}" for line in text.splitlines())
        if self.error:
            lines.append(f"  raised: {self.error}")
        return "\n".join(lines)


@home("prism_core.pipelines")
@dataclass(frozen=True)
class PipelineReport:
    """A pipeline run: its stages in the order they were first entered, and what happened
    outside them (``moves`` and ``fallbacks`` of calls between stages).

    ``checked`` says what was checked before the first stage ran (the stages found in the
    function's source; :mod:`prism_core._pipeline.pipeline`).  ``error`` is set when the run
    raised (the exception reached the caller; this report is then on it as ``report``).
    """

    pipeline: str
    stages: tuple[StageReport, ...]
    seconds: float
    moves: tuple[MoveRecord, ...] = ()
    fallbacks: tuple[StageFallback, ...] = ()
    checked: tuple[str, ...] = ()
    error: str | None = None

    def stage(self, name: str) -> StageReport:
        """The report of the stage called ``name``."""
        for s in self.stages:
            if s.name == name:
                return s
        from prism_core.kernel.errors import did_you_mean

        names = [s.name for s in self.stages]
        raise KeyError(
            f"no stage {name!r} ran in pipeline {self.pipeline!r}{did_you_mean(name, names)}; "
            f"stages: {', '.join(names) or 'none'}"
        )

    @property
    def bytes_moved(self) -> int:
        """Every byte dispatch moved in the run, in and out, in stages and between them."""
        inside = sum(s.bytes_in + s.bytes_out for s in self.stages)
        return inside + sum(m.nbytes or 0 for m in self.moves)

    def as_dict(self) -> dict[str, Any]:
        return {
            "pipeline": self.pipeline,
            "seconds": self.seconds,
            "bytes_moved": self.bytes_moved,
            "stages": [s.as_dict() for s in self.stages],
            "moves": [m.as_dict() for m in self.moves],
            "fallbacks": [f.as_dict() for f in self.fallbacks],
            "checked": list(self.checked),
            "error": self.error,
        }

    def describe(self) -> str:
        """A table of the stages, then each stage's details."""
        head = (
            f"pipeline {self.pipeline!r}: {len(self.stages)} stage"
            f"{'' if len(self.stages) == 1 else 's'}, {seconds_text(self.seconds)}, "
            f"{bytes_text(self.bytes_moved)} moved"
            + (f"; raised {self.error}" if self.error else "")
        )
        rows = [
            (
                s.name,
                s.placement,
                seconds_text(s.seconds),
                str(s.runs),
                bytes_text(s.bytes_in),
                bytes_text(s.bytes_out),
                str(len(s.fallbacks)),
                str(len(s.splits)),
            )
            for s in self.stages
        ]
        lines = [head]
        if rows:
            header = ("stage", "ran on", "time", "runs", "in", "out", "fallbacks", "splits")
            lines.extend("  " + r for r in _table(header, rows))
        for s in self.stages:
            lines.extend("  " + line for line in s.describe().splitlines())
        lines.extend(f"  between stages, moved: {m.describe()}" for m in self.moves)
        lines.extend(f"  between stages, fallback: {f.describe()}" for f in self.fallbacks)
        lines.extend(f"  checked: {c}" for c in self.checked)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.describe()


class PipelineRun(NamedTuple):
    """What ``fn.run(...)`` returns: the pipeline's ``result`` and the run's ``report``
    (``result, report = fn.run(...)`` unpacks it)."""

    result: Any
    report: PipelineReport


PipelineRun.__module__ = "prism_core.pipelines"


@home("prism_core.pipelines")
@dataclass(frozen=True)
class PlannedCall:
    """One op call of a planned pipeline: dispatch's decision for it and what it would cost.

    ``decision`` is what ``prism.explain(op, ...)`` gives for the call's arguments (arrays as
    :class:`~prism_core.ArraySpec`: shape and dtype).  ``seconds`` is the predicted time of the
    chosen variant on its device (tuned time where the tuner measured it, else the performance
    model's roofline, transfers to a GPU included: ``transfer_seconds``), ``None`` when neither
    knows it (``predicted`` says why).  ``result`` is the shape and dtype of what the call
    returns and ``result_by`` how that was worked out; ``notes`` say where the plan may differ
    from a run (an argument another backend holds at run time).
    """

    op: str
    signature: tuple[str, ...]
    decision: Decision
    seconds: float | None
    transfer_seconds: float | None
    predicted: str
    result: str
    result_by: str
    notes: tuple[str, ...] = ()

    @property
    def runs_on(self) -> str:
        """``"numpy.matmul on numpy for generic.x86-64-v4"`` or why nothing can run it."""
        d = self.decision
        if d.chosen is None:
            base = "no installed variant can run it"
        else:
            base = f"{d.chosen} on {d.chosen_backend}" + (
                f" for {d.chosen_device}" if d.chosen_device else ""
            )
        if d.simulated and d.executed:
            base += f" (simulated: executes {d.executed})"
        return base

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "signature": list(self.signature),
            "runs_on": self.runs_on,
            "seconds": self.seconds,
            "transfer_seconds": self.transfer_seconds,
            "predicted": self.predicted,
            "result": self.result,
            "result_by": self.result_by,
            "notes": list(self.notes),
            "decision": self.decision.as_dict(),
        }

    def describe(self) -> str:
        lines = [
            f"{self.op}({', '.join(self.signature)}) -> {self.result}: {self.runs_on}, "
            f"{seconds_text(self.seconds)} ({self.predicted})"
        ]
        lines.extend(f"  moves: {m}" for m in self.decision.data_movement)
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


@home("prism_core.pipelines")
@dataclass(frozen=True)
class PlannedStage:
    """One stage of a plan: where it would run (the same resolution a run makes, against the
    devices present here or the ones a stage simulates) and its calls in order."""

    name: str
    placement: str
    backend: str | None
    device: str | None
    simulated: bool
    dispatch: str
    why: str
    skipped: tuple[str, ...] = ()
    calls: tuple[PlannedCall, ...] = ()

    @property
    def seconds(self) -> float:
        """The predicted time of the calls whose time is known (see :attr:`unpredicted`)."""
        return sum(c.seconds for c in self.calls if c.seconds is not None)

    @property
    def unpredicted(self) -> int:
        """How many calls have no predicted time."""
        return sum(1 for c in self.calls if c.seconds is None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "placement": self.placement,
            "backend": self.backend,
            "device": self.device,
            "simulated": self.simulated,
            "dispatch": self.dispatch,
            "why": self.why,
            "skipped": list(self.skipped),
            "seconds": self.seconds,
            "unpredicted": self.unpredicted,
            "calls": [c.as_dict() for c in self.calls],
        }

    def describe(self) -> str:
        lines = [f"stage {self.name!r}: {self.placement} ({self.dispatch}): {self.why}"]
        lines.extend(f"  skipped: {s}" for s in self.skipped)
        for c in self.calls:
            lines.extend("  " + line for line in c.describe().splitlines())
        if not self.calls:
            lines.append("  no op calls")
        return "\n".join(lines)


@home("prism_core.pipelines")
@dataclass(frozen=True)
class PipelinePlan:
    """What a pipeline would do, from tracing it with shapes and dtypes instead of data.

    ``stopped`` says why the trace ended early (an op whose result's shape could not be worked
    out, or the function doing something with an array that needs its data), and
    ``not_reached`` names the stages found in the source that the trace did not reach.
    ``calls`` are op calls made outside any stage.
    """

    pipeline: str
    stages: tuple[PlannedStage, ...]
    calls: tuple[PlannedCall, ...] = ()
    stopped: str | None = None
    not_reached: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def seconds(self) -> float:
        """The predicted time of every call whose time is known."""
        return sum(s.seconds for s in self.stages) + sum(
            c.seconds for c in self.calls if c.seconds is not None
        )

    def stage(self, name: str) -> PlannedStage:
        for s in self.stages:
            if s.name == name:
                return s
        from prism_core.kernel.errors import did_you_mean

        names = [s.name for s in self.stages]
        raise KeyError(
            f"no stage {name!r} in the plan of {self.pipeline!r}{did_you_mean(name, names)}; "
            f"stages: {', '.join(names) or 'none'}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "pipeline": self.pipeline,
            "seconds": self.seconds,
            "stages": [s.as_dict() for s in self.stages],
            "calls": [c.as_dict() for c in self.calls],
            "stopped": self.stopped,
            "not_reached": list(self.not_reached),
            "notes": list(self.notes),
        }

    def describe(self) -> str:
        unknown = sum(s.unpredicted for s in self.stages) + sum(
            1 for c in self.calls if c.seconds is None
        )
        head = f"plan of pipeline {self.pipeline!r}: predicted {seconds_text(self.seconds)}"
        if unknown:
            head += f" (+ {unknown} call{'' if unknown == 1 else 's'} not predicted)"
        rows = [
            (
                s.name,
                s.placement,
                str(len(s.calls)),
                seconds_text(s.seconds) + (f" + {s.unpredicted}?" if s.unpredicted else ""),
            )
            for s in self.stages
        ]
        lines = [head]
        if rows:
            lines.extend("  " + r for r in _table(("stage", "runs on", "calls", "predicted"), rows))
        for s in self.stages:
            lines.extend("  " + line for line in s.describe().splitlines())
        for c in self.calls:
            lines.extend("  outside stages: " + line for line in c.describe().splitlines())
        if self.stopped:
            lines.append(f"  the trace stopped: {self.stopped}")
        if self.not_reached:
            lines.append(f"  not reached by the trace: {', '.join(self.not_reached)}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.describe()
