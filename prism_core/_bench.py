"""``prism bench``: Prism's main job on a machine.

Detect the hardware, measure the core ops over sizes and dtypes on every installed backend and
device, store the tuned choices (the tuning cache), then measure what Prism now does, side by
side with the fastest variant of each size (the oracle) and with NumPy alone, in one run: two
interleaved phases per case, tuning then checking (``_tuning.tuner.measure``).  An op a plugin
declares with example arguments (``backend_kit.Examples``) is benchmarked the same way when it
is named, by its name or its group's.  docs/performance.md, "``prism bench``";
docs/writing-a-plugin.md, "Example arguments for ``prism bench`` and ``prism.tuning.tune``".
"""

from __future__ import annotations

import math
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from prism_core._tuning.candidates import Runner, candidates
from prism_core._tuning.load import MachineLoad
from prism_core._tuning.measurements import Measurement, median_interval
from prism_core._tuning.tune_report import Keeper, TuneCase, stored_case
from prism_core._tuning.tuner import (
    BUILTIN_EXAMPLES,
    declared_examples,
    example_arguments,
    measure,
    share,
    tune_case,
)
from prism_core.kernel.dispatch.ops import get_op
from prism_core.kernel.errors import PrismError
from prism_core.kernel.quantities import seconds_text

if TYPE_CHECKING:
    from prism_core._tuning.calibration import CalibrationReport
    from prism_core.kernel.op_examples import Examples

__all__ = [
    "FULL",
    "QUICK",
    "BenchReport",
    "BenchRow",
    "run_bench",
    "run_calibration",
]

#: The order ``prism bench`` shows the builtin ops in (a presentation choice; any other op
#: whose record has examples follows, in the records' order).
_SHOWN = ("matmul", "fft.fft", "linalg.svd", "linalg.solve", "add")
_BUILTIN = sorted(
    BUILTIN_EXAMPLES.items(),
    key=lambda item: _SHOWN.index(item[0]) if item[0] in _SHOWN else len(_SHOWN),
)
#: Sizes ``n`` per builtin op, from the examples of its record (``OpRecord.examples``:
#: ``quick`` and ``full``; n x n matrices, vectors of n).
QUICK: dict[str, list[int]] = {name: [n for n, _ in e.sizes(True)] for name, e in _BUILTIN}
FULL: dict[str, list[int]] = {name: [n for n, _ in e.sizes(False)] for name, e in _BUILTIN}
DTYPES = ("float32", "float64")
#: The name of Prism's own call among a row's measurements.
PRISM = "prism"
#: What to install for more than NumPy's reference to compare with, for a builtin op (an op
#: that carries its examples names its own: ``Examples.install``).
_MORE_BACKENDS = "prism-plugin-scipy or prism-plugin-torch, from plugins/ in Prism's repository"


def groups(declared: dict[str, Examples]) -> dict[str, tuple[str, ...]]:
    """Names that stand for several ops in ``prism bench NAME``: each group of the ops that
    carry examples (``Examples.group``), with its ops in name order."""
    out: dict[str, list[str]] = {}
    for name, examples in sorted(declared.items()):
        if examples.group is not None:
            out.setdefault(examples.group, []).append(name)
    return {group: tuple(names) for group, names in out.items()}


class BenchError(PrismError, ValueError):
    """``prism bench`` was asked for something it cannot do; the message says what it can."""


@dataclass(frozen=True)
class BenchRow:
    """One op, dtype and size: what each variant and Prism's own call took, timed together in
    interleaved rounds (``check``), what the tuning decided (``case``), and the ratios.

    The fastest variant of ``check`` is the row's oracle, so ``oracle_s`` is its own entry in
    the row's times; ``interval`` is the 95 % interval of Prism's time over the oracle's,
    round by round, and ``verdict`` reads it: ``"tie"`` when it holds 1 (the gap is within the
    noise of this run), else ``"slower"`` or ``"faster"``."""

    op: str
    dtype: str
    n: int
    case: TuneCase
    check: tuple[Measurement, ...]
    picks: str | None
    decided_by: str
    #: Items in the batch (an op whose examples are batches), else ``None``.
    batch: int | None = None
    #: Cell updates of one call (the work measure of an op whose examples count them), else
    #: ``None``.
    cells: int | None = None
    #: Why a cell of the row is empty, or what it was measured against: ``""`` when nothing
    #: needs saying.
    note: str = ""
    #: The tuned choice was the one stored for this host (not measured again).
    reused: bool = False
    #: The machine was busy with other work while the row was measured (more rounds taken).
    busy: bool = False
    #: The example arguments the op carries (its plot's axis), ``None`` for a builtin op.
    examples: Examples | None = None

    def _timed(self, name: str | None) -> Measurement | None:
        m = next((m for m in self.check if m.variant == name), None)
        return m if m is not None and m.error is None else None

    @property
    def label(self) -> str:
        """The size as the table shows it: ``n``, or ``n x batch``."""
        return str(self.n) if self.batch is None else f"{self.n} x {self.batch}"

    @property
    def oracle(self) -> str | None:
        """The fastest variant in this row's rounds (the per-size oracle)."""
        timed = [m for m in self.check if m.error is None and m.variant != PRISM]
        return min(timed, key=lambda m: (m.seconds, m.variant)).variant if timed else None

    @property
    def prism_s(self) -> float | None:
        m = self._timed(PRISM)
        return None if m is None else m.seconds

    @property
    def oracle_s(self) -> float | None:
        m = self._timed(self.oracle)
        return None if m is None else m.seconds

    @property
    def numpy_s(self) -> float | None:
        m = next((m for m in self.check if m.backend == "numpy" and m.error is None), None)
        return None if m is None else m.seconds

    @property
    def gcups(self) -> float | None:
        """Prism's giga cell updates per second (ops whose examples count cells), else
        ``None``."""
        if self.cells is None or not self.prism_s:
            return None
        return self.cells / self.prism_s / 1e9

    @property
    def vs_oracle(self) -> float | None:
        if self.prism_s is None or not self.oracle_s:
            return None
        return self.prism_s / self.oracle_s

    @property
    def vs_numpy(self) -> float | None:
        if self.prism_s is None or not self.numpy_s:
            return None
        return self.prism_s / self.numpy_s

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95 % interval of Prism's time over the oracle's in the paired rounds."""
        prism, oracle = self._timed(PRISM), self._timed(self.oracle)
        if prism is None or oracle is None:
            return None
        ratios = [p / o for p, o in zip(prism.samples, oracle.samples, strict=False) if o > 0]
        return median_interval(ratios)

    @property
    def verdict(self) -> str | None:
        bounds = self.interval
        if bounds is None:
            return None
        low, high = bounds
        return "tie" if low <= 1.0 <= high else ("slower" if low > 1.0 else "faster")

    def as_dict(self) -> dict[str, Any]:
        timed = [m for m in self.check if m.variant != PRISM]
        bounds = self.interval
        return {
            "op": self.op,
            "dtype": self.dtype,
            "n": self.n,
            "times": {m.variant: (None if m.error else m.seconds) for m in timed},
            "intervals": {
                m.variant: bounds
                for m in self.check
                if m.error is None and (bounds := median_interval(m.samples)) is not None
            },
            "errors": {m.variant: m.error for m in self.check if m.error},
            "tuned": self.case.decided,
            "tuned_times": {
                m.variant: m.seconds for m in self.case.measurements if m.error is None
            },
            "reused": self.reused,
            "busy": self.busy,
            "oracle": self.oracle,
            "prism_picks": self.picks,
            "decided_by": self.decided_by,
            "prism_s": self.prism_s,
            "oracle_s": self.oracle_s,
            "numpy_s": self.numpy_s,
            "prism_vs_oracle": self.vs_oracle,
            "prism_vs_oracle_interval": None if bounds is None else list(bounds),
            "verdict": self.verdict,
            "prism_vs_numpy": self.vs_numpy,
            "rounds": min((len(m.samples) for m in self.check if m.error is None), default=0),
            "note": self.note,
            **(
                {"batch": self.batch, "cells": self.cells, "prism_gcups": self.gcups}
                if self.cells is not None
                else {}
            ),
        }


def geomean(values: Sequence[float]) -> float | None:
    vals = [v for v in values if v and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


@dataclass
class BenchReport:
    """Everything ``prism bench`` measured, with the host it ran on and how busy it was."""

    host: dict[str, Any]
    rows: list[BenchRow] = field(default_factory=list)
    stored: int = 0
    store_path: str | None = None
    problems: list[str] = field(default_factory=list)
    #: What to install where only NumPy's reference ran (an op with one variant here):
    #: nothing was compared.
    notes: list[str] = field(default_factory=list)
    #: Seconds from the start of the budget (the command's start, for ``prism bench``) to the
    #: end of measuring and storing, and of them, those before the first measurement.
    seconds: float = 0.0
    start_up_s: float = 0.0
    quick: bool = True
    #: Tuned choices measured that could not be written to ``store_path`` (``problems`` says
    #: why): they last only as long as this process.
    unstored: int = 0
    #: The model's calibration fitted to the measurements (stored with the tuned choices).
    calibration: dict[str, Any] = field(default_factory=dict)
    #: The cap on the run's time (``--budget``), ``None`` for none.
    budget_s: float | None = None
    #: The other processes' share of the CPUs before and during the run.
    load: MachineLoad | None = None
    #: The calibration step's outcome, where it ran (``calibrate``: see :func:`run_bench`).
    calibration_step: CalibrationReport | None = None

    @property
    def reused(self) -> int:
        return sum(r.reused for r in self.rows)

    def summary(self) -> dict[str, Any]:
        ops = sorted({r.op for r in self.rows})
        per_op = {
            op: {
                "prism_vs_oracle": geomean([r.vs_oracle or 0 for r in self.rows if r.op == op]),
                "prism_vs_numpy": geomean([r.vs_numpy or 0 for r in self.rows if r.op == op]),
            }
            for op in ops
        }
        verdicts = [r.verdict for r in self.rows]
        return {
            "prism_vs_oracle": geomean([r.vs_oracle or 0 for r in self.rows]),
            "prism_vs_numpy": geomean([r.vs_numpy or 0 for r in self.rows]),
            "numpy_vs_oracle": geomean(
                [(r.numpy_s or 0) / r.oracle_s for r in self.rows if r.oracle_s]
            ),
            "ties": verdicts.count("tie"),
            "slower": verdicts.count("slower"),
            "faster": verdicts.count("faster"),
            "per_op": per_op,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "load": None if self.load is None else self.load.as_dict(),
            "quick": self.quick,
            "budget_s": self.budget_s,
            "seconds": self.seconds,
            "start_up_s": self.start_up_s,
            "stored": self.stored,
            "unstored": self.unstored,
            "reused": self.reused,
            "store_path": self.store_path,
            "problems": self.problems,
            "notes": self.notes,
            "calibration": self.calibration,
            "calibration_step": (
                None if self.calibration_step is None else self.calibration_step.as_dict()
            ),
            "summary": self.summary(),
            "rows": [r.as_dict() for r in self.rows],
        }


def bench_host() -> dict[str, Any]:
    """The host as ``prism bench`` reports it: Python, the machine, the devices present and
    the available backends with their versions."""
    from prism_core._backend_registry import backends
    from prism_core.kernel.host import present_devices

    present = present_devices()
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "devices": [
            {"device_type": d.device_type, "name": d.name, "index": d.index}
            for d in present.devices
        ],
        "backends": {b.name: b.version for b in backends() if b.available},
    }


def run_bench(
    *,
    quick: bool = True,
    ops: Sequence[str] | None = None,
    dtypes: Sequence[str] = DTYPES,
    budget_s: float | None = None,
    store: Any = True,
    force: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
    host: dict[str, Any] | None = None,
    load: MachineLoad | None = None,
    started: float | None = None,
    calibrate: bool | None = None,
) -> BenchReport:
    """Measure, tune and check the core ops (see the module docstring).

    ``budget_s`` caps the whole run (seconds; the phases share it and none is measured past
    it), counted from ``started`` (a ``time.perf_counter()`` value: ``prism bench`` gives the
    command's start, so that its start-up counts; default: the call).  ``store``: ``True``,
    the tuned choices go to this host's tuning cache; a ``TuningStore``, to that one;
    ``False``, nowhere.  A case whose choice that store already holds (measured on this host,
    with the same software and backend settings: the store's fingerprint) is not tuned again
    unless ``force``; its row is still checked.  Each case's
    choice is stored as soon as it is measured (an interrupt loses none already measured), the
    model's calibration once all are.  ``host`` and ``load``: what :func:`bench_host` and
    :class:`MachineLoad` gave, when the caller showed them before the run.

    ``calibrate``: whether the calibration step (:func:`run_calibration`) runs first; ``None``
    (the default): where a device other than the CPU is present that this host's cache holds
    no calibration step for, or with ``force``.  The model's calibration fitted to the CPU's
    tuned times is stored over the step's."""
    from prism_core._tuning.tuning_records import TuningStore, reload
    from prism_core.kernel.dispatch.explain import explain

    sizes = QUICK if quick else FULL
    # Ops that carry their examples are benchmarked only when named (by name or group).
    declared = declared_examples() if ops else {}
    named = groups(declared)
    chosen = list(sizes) if not ops else [o for g in ops for o in named.get(g, (g,))]
    unknown = [o for o in chosen if o not in sizes and o not in declared]
    if unknown:
        raise BenchError(
            f"--ops: {', '.join(unknown)} not benchmarked; choose among "
            f"{', '.join([*sizes, *named, *declared])}"
        )
    for d in dtypes:
        if d not in DTYPES:
            raise BenchError(f"--dtypes: {d!r} not benchmarked; choose among {', '.join(DTYPES)}")
    if budget_s is not None and not budget_s > 0:
        raise BenchError(f"--budget: expected a positive number of seconds; got {budget_s!r}")
    per_phase = 0.25 if quick else 1.0
    began = time.perf_counter() if started is None else started
    deadline = None if budget_s is None else began + budget_s
    load = load if load is not None else MachineLoad()
    report = BenchReport(host or bench_host(), quick=quick, budget_s=budget_s, load=load)
    plan: list[tuple[str, str, int, int | None]] = []
    for op in dict.fromkeys(chosen):
        examples = declared.get(op)
        if examples is None:
            plan.extend((op, dtype, n, None) for dtype in dtypes for n in sizes[op])
        elif examples.dtype_label is not None:  # fixed types: one row per size
            plan.extend((op, examples.dtype_label, n, b) for n, b in examples.sizes(quick))
        else:
            plan.extend((op, d, n, b) for d in dtypes for n, b in examples.sizes(quick))
    total = 2 * len(plan)
    step = 0
    source = None if store is False or force else (TuningStore() if store is True else store)
    stored = source.load() if source is not None else None
    keeper = Keeper(None if store is True else store)
    if calibrate is None:
        calibrate = _calibration_due(force)
    if calibrate:
        from prism_core._tuning.calibration import calibrate_host, devices_to_calibrate, steps

        families = [o for o in dict.fromkeys(chosen) if o in sizes]
        accelerators = sum(1 for _, _, b in devices_to_calibrate() if b is not None)
        total += steps(families, dtypes, accelerators)

        def calibrating(label: str) -> None:
            nonlocal step
            if progress is not None:
                progress(step, total, f"calibrating: {label}")
            step += 1

        # A quarter of the budget at most: the tuning is the bench's main work.
        until = None if deadline is None else began + (deadline - began) / 4
        report.calibration_step = calibrate_host(
            ops=families, dtypes=dtypes, progress=calibrating, deadline=until,
            base=_stored_calibration(store),
        )  # fmt: skip
        report.problems.extend(report.calibration_step.problems)
        keeper.keep([], report.calibration_step.calibration)

    def phase(what: str) -> tuple[float, float | None, int, bool]:
        """Before each phase: progress, its share of the time (budget and hard stop), and its
        rounds (more where the machine was busy in the phase before)."""
        nonlocal step
        if progress is not None:
            progress(step, total, what)
        step += 1
        busy = load.is_busy(load.sample())
        return (*share(deadline, total - step + 1, per_phase), 10 if busy else 5, busy)

    tuned: list[tuple[str, str, int, int | None, tuple[Any, ...], TuneCase, bool]] = []
    report.start_up_s = time.perf_counter() - began
    for op, dtype, n, batch in plan:
        size = f"n={n}" if batch is None else f"n={n} batch={batch}"
        args = example_arguments(op, n, dtype, batch=batch)
        found = candidates(op, args)
        case = stored_case(found, stored) if stored is not None else None
        if case is not None:
            if progress is not None:
                progress(step, total, f"stored choice of {op} {dtype} {size}")
            step += 1
            tuned.append((op, dtype, n, batch, args, case, True))
            continue
        budget, stop, rounds, _busy = phase(f"tuning {op} {dtype} {size}")
        case, entry = tune_case(
            op, args, budget_s=budget, deadline=stop, min_rounds=rounds, found=found
        )
        tuned.append((op, dtype, n, batch, args, case, False))
        if entry is not None:
            keeper.keep([entry])
    step_report = report.calibration_step
    calibration = _calibration(
        [(t[5], t[1]) for t in tuned],
        declared,
        report.problems,
        base=step_report.calibration if step_report is not None else _stored_calibration(store),
        points=[] if step_report is None else [p.measurement() for p in step_report.points],
    )
    report.calibration = calibration
    if any(not reused for *_, reused in tuned) or step_report is not None:
        keeper.keep([], calibration)
    report.stored, report.unstored, report.store_path, problems = keeper.outcome()
    report.problems.extend(problems)
    if keeper.store is not None:
        reload()  # the checks below use what was stored
    for op, dtype, n, batch, args, case, reused in tuned:
        size = f"n={n}" if batch is None else f"n={n} batch={batch}"
        budget, stop, rounds, busy = phase(f"checking {op} {dtype} {size}")
        row = _check(op, dtype, n, args, case, explain, budget, stop, rounds, reused)
        row = replace(row, reused=reused, busy=busy)
        examples = declared.get(op)
        if examples is not None:
            cells = None if examples.cells is None else int(examples.cells(args))
            row = replace(row, batch=batch, cells=cells, examples=examples)
        report.rows.append(row)
    load.sample()
    alone: dict[str, list[str]] = {}  # what to install -> the ops that had one variant
    for op in dict.fromkeys(o for o, *_ in plan):
        cases = [t[5] for t in tuned if t[0] == op]
        if all(c.decided == "only" for c in cases):
            examples = declared.get(op)
            what = examples.install if examples is not None else None
            alone.setdefault(what or _MORE_BACKENDS, []).append(f"{op} ({cases[0].winner})")
    for what, only in alone.items():
        report.notes.append(
            f"one variant only can run here for {', '.join(only)}, so nothing was compared; for "
            f"others to compare with, install {what}"
        )
    if progress is not None:
        progress(total, total, "done")
    report.seconds = time.perf_counter() - began
    return report


def _stored_calibration(store: Any) -> dict[str, Any]:
    """This host's stored calibration (``{}`` where nothing is stored, or ``store`` is
    ``False``)."""
    from prism_core._tuning.tuning_records import TuningStore

    if store is False:
        return {}
    found = (TuningStore() if store is True or store is None else store).load()
    data: dict[str, Any] = found.as_dict()["calibration"]
    return data


def _calibration_due(force: bool) -> bool:
    """Whether ``prism bench`` runs the calibration step: a device other than the CPU is
    present, driven by an available backend, that this host's cache holds no calibration step
    for (``measured_at``), or ``force``."""
    from prism_core._tuning.calibration import devices_to_calibrate
    from prism_core._tuning.tuning_records import records

    others = [d.device_type for d, _, backend in devices_to_calibrate() if backend is not None]
    if not others:
        return False
    stored = records().calibration
    return force or any("measured_at" not in stored.get(d, {}) for d in others)


def run_calibration(
    *,
    ops: Sequence[str] | None = None,
    dtypes: Sequence[str] = DTYPES,
    budget_s: float | None = None,
    store: Any = True,
    progress: Callable[[int, int, str], None] | None = None,
    started: float | None = None,
) -> tuple[CalibrationReport, Keeper]:
    """``prism bench --calibrate``: the calibration step alone (``prism_core._tuning.
    calibration``), stored in this host's tuning cache (``store`` as for :func:`run_bench`)
    over what it holds.  Returns the report and the keeper that stored it
    (``keeper.outcome()``)."""
    from prism_core._tuning.calibration import OPS, calibrate_host, devices_to_calibrate, steps

    unknown = [o for o in ops or () if o not in OPS]
    if unknown:
        raise BenchError(f"--calibrate measures {', '.join(OPS)}; not {', '.join(unknown)}")
    for d in dtypes:
        if d not in DTYPES:
            raise BenchError(f"--dtypes: {d!r} not benchmarked; choose among {', '.join(DTYPES)}")
    if budget_s is not None and not budget_s > 0:
        raise BenchError(f"--budget: expected a positive number of seconds; got {budget_s!r}")
    began = time.perf_counter() if started is None else started
    families = list(dict.fromkeys(ops or OPS))
    accelerators = sum(1 for _, _, b in devices_to_calibrate() if b is not None)
    total = steps(families, dtypes, accelerators)
    done = 0

    def step(label: str) -> None:
        nonlocal done
        if progress is not None:
            progress(done, total, f"calibrating: {label}")
        done += 1

    report = calibrate_host(
        ops=families, dtypes=dtypes, progress=step,
        deadline=None if budget_s is None else began + budget_s,
        base=_stored_calibration(store),
    )  # fmt: skip
    if progress is not None:
        progress(total, total, "done")
    keeper = Keeper(None if store is True else store)
    keeper.keep([], report.calibration)
    return report, keeper


def _calibration(
    cases: Sequence[tuple[TuneCase, str]],
    declared: dict[str, Examples],
    problems: list[str],
    *,
    base: dict[str, Any] | None = None,
    points: Sequence[Any] = (),
) -> dict[str, Any]:
    """The performance model calibrated to the fastest time of each case on the CPU
    (StarPU-style: per device type and op, an efficiency and an overhead), with the
    calibration step's ``points`` where it ran, over ``base`` (the step's or the stored
    calibration, whose other figures stay), as data for the tuning cache; the model's
    modelled choices (between devices, under policies) use it from then on.

    A variant on another device took its arguments from NumPy's arrays on the host: its time
    includes the copies, which the model prices apart (the link the calibration step
    measures), so it calibrates nothing; the step measures such devices with the data on
    them."""
    from prism_core._tuning.model import ModelError, PerformanceModel

    try:
        model = PerformanceModel(base or None)
    except (TypeError, ValueError) as exc:  # a stored calibration the model rejects
        problems.append(f"the stored calibration is not used: {exc}")
        model = PerformanceModel()
    measurements = list(points)
    for case, dtype in cases:
        timed = [
            m
            for m in case.measurements
            if m.error is None and m.device is not None and _on_cpu(model, m.device)
        ]
        if not timed:
            continue
        best = min(timed, key=lambda m: m.seconds)
        # An op whose examples say so (integer arithmetic: alignments) is rated at the
        # device's throughput in that dtype, whatever its rows' dtype column shows.
        examples = declared.get(case.op)
        kind = examples.model_dtype if examples is not None and examples.model_dtype else dtype
        measurements.append((case.op, case.shapes, kind, best.device, best.seconds))
    if not measurements:
        return model.calibration
    try:
        return model.calibrate(measurements).calibration
    except (ModelError, ValueError, TypeError) as exc:
        problems.append(f"the performance model could not be calibrated: {exc}")
        return model.calibration


def _on_cpu(model: Any, device: str) -> bool:
    try:
        return bool(model.description(device).kind == "cpu")
    except Exception:  # a device type the library does not know: nothing to calibrate
        return False


def _check(
    op: str,
    dtype: str,
    n: int,
    args: tuple[Any, ...],
    case: TuneCase,
    explain: Callable[..., Any],
    budget_s: float,
    deadline: float | None,
    rounds: int,
    reused: bool,
) -> BenchRow:
    """Phase 2: Prism's automatic call and every variant, timed together in interleaved
    rounds, so that Prism's time and the fastest variant's are taken at the same moments.  A
    case whose choice was ``reused`` is checked against the stored winner, the variant Prism
    picks and NumPy's only: the others were measured slower when it was stored."""
    decision = explain(op, *args)
    found = candidates(op, args)
    fn = get_op(op).function
    runners = found.runners
    if reused:
        wanted = {case.winner, decision.chosen}
        runners = tuple(r for r in runners if r.variant in wanted or r.backend == "numpy")
    contenders = [Runner(PRISM, "", None, lambda: fn(*args)), *runners]
    check = tuple(
        measure(
            contenders, budget_s=budget_s, deadline=deadline, min_rounds=rounds,
            max_rounds=max(25, 2 * rounds),
        )
    )  # fmt: skip
    row = BenchRow(op, dtype, n, case, check, decision.chosen, decision.decided_by)
    if len(found.runners) == 1:
        # Nothing to choose: Prism is timed against the one variant there is.
        only = found.runners[0].variant
        return replace(row, note=f"{only} is the only variant that can run here")
    if row.oracle is None or row.prism_s is None:
        errors = "; ".join(f"{m.variant}: {m.error}" for m in check if m.error)
        return replace(row, note=f"not timed ({errors or 'no variant can run here'})")
    return row


# -- output -----------------------------------------------------------------------------------


def _t(seconds: float | None) -> str:
    return "-" if seconds is None or not math.isfinite(seconds) else seconds_text(seconds)


def _r(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def _versus(row: BenchRow) -> str:
    """Prism over the fastest variant, with the half-width of its 95 % interval; ``tie`` when
    the interval holds 1."""
    bounds = row.interval
    if bounds is None:
        return _r(row.vs_oracle)
    spread = f"±{(bounds[1] - bounds[0]) / 2:.0%}"
    if row.verdict == "tie":
        return f"tie ({spread})"
    return f"{_r(row.vs_oracle)} ({spread})"


def header(host: dict[str, Any], load: MachineLoad, budget_s: float | None) -> str:
    """What ``prism bench`` prints before it measures: the devices, the backends with their
    versions, the machine's load and the budget."""
    devices = ", ".join(f"{d['name']} ({d['device_type']})" for d in host["devices"]) or "-"
    backends = ", ".join(f"{k} {v or ''}".strip() for k, v in host["backends"].items())
    cap = f"; at most {budget_s:g} s (--budget)" if budget_s is not None else ""
    return f"devices: {devices}\nbackends: {backends}\n{load.describe()}{cap}\n"


def render(report: BenchReport) -> list[list[str]]:
    """The table's rows (header first)."""
    rows = [
        [
            "op",
            "dtype",
            "n",
            "fastest",
            "time",
            "Prism picks",
            "why",
            "Prism",
            "vs fastest",
            "vs NumPy",
        ]
    ]
    for r in report.rows:
        rows.append(
            [
                r.op,
                r.dtype,
                r.label,
                r.oracle or "-",
                _t(r.oracle_s),
                r.picks or "-",
                r.decided_by + (" (stored)" if r.reused else ""),
                _t(r.prism_s),
                _versus(r),
                _r(r.vs_numpy),
            ]
        )
    return rows
