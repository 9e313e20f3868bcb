"""``prism bench``: Prism's main job on a machine.

Detect the hardware, measure the core ops (matmul, fft, svd, solve, an elementwise add) over
sizes and dtypes on every installed backend and device, store the tuned choices (the tuning
cache: dispatch uses them from then on, in every process on this host), then measure what
Prism now does, side by side with the fastest variant of each size (the per-size oracle) and
with NumPy alone, in one run.

Two phases per case, both interleaved (``prism_core._tuning.tuner.measure``):

1. tuning: every candidate variant of the call, as dispatch runs it (moves included); the
   winner is stored when its gap is significant, else the declared order stands;
2. checking: ``prism.<op>(*args)`` in automatic mode (the tuned plan), the oracle's variant
   and NumPy's, again interleaved, so that the ratios compare times taken together.

``prism bench genomics.align`` (issue 11) does the same for the two Smith-Waterman ops, over
sequence lengths (``genomics.sw_align``: a query of n letters against a target of 10 n) and
batch sizes (``genomics.sw_align_batch``: n letters against a batch of targets of n), random
DNA scored 2/-3 with gaps 5/2; the work measure is cell updates (``n x m``), and the rows give
GCUPS besides the times.  These ops are benchmarked only when named: their arrays' types are
fixed, so ``--dtypes`` does not apply to them.
"""

from __future__ import annotations

import math
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from prism_core._dispatch.dispatcher import Runner, candidates
from prism_core._dispatch.ops import get_op
from prism_core._errors import PrismError
from prism_core._tuning.tuner import Keeper, TuneCase, example_arguments, measure, tune_case

__all__ = [
    "FULL",
    "GENOMICS_FULL",
    "GENOMICS_QUICK",
    "GROUPS",
    "QUICK",
    "BenchReport",
    "BenchRow",
    "run_bench",
]

#: Sizes ``n`` per op (example_arguments: n x n matrices, vectors of n).
QUICK: dict[str, list[int]] = {
    "matmul": [16, 128, 512],
    "fft.fft": [256, 16384, 1 << 20],
    "linalg.svd": [16, 128, 384],
    "linalg.solve": [16, 256, 1024],
    "add": [1024, 1 << 20],
}
FULL: dict[str, list[int]] = {
    "matmul": [4, 16, 64, 256, 1024, 2048],
    "fft.fft": [2**4, 2**8, 2**12, 2**16, 2**20],
    "linalg.svd": [8, 32, 128, 512, 1024],
    "linalg.solve": [8, 64, 256, 1024],
    "add": [2**10, 2**14, 2**18, 2**22],
}
DTYPES = ("float32", "float64")
#: The alignment ops' sizes: ``(n, batch)``, the query's length and, for the batch op, the
#: number of targets (``None`` for one pair: a target of ``10 n``).  1000 is the issue's
#: 1,000 x 10,000 alignment.
GENOMICS_QUICK: dict[str, list[tuple[int, int | None]]] = {
    "genomics.sw_align": [(100, None), (1000, None)],
    "genomics.sw_align_batch": [(100, 64), (1000, 64)],
}
GENOMICS_FULL: dict[str, list[tuple[int, int | None]]] = {
    "genomics.sw_align": [(30, None), (100, None), (300, None), (1000, None), (3000, None)],
    "genomics.sw_align_batch": [(100, 16), (100, 1024), (1000, 16), (1000, 256)],
}
#: Names that stand for several ops (``prism bench genomics.align``).
GROUPS: dict[str, tuple[str, ...]] = {
    "genomics.align": ("genomics.sw_align", "genomics.sw_align_batch"),
}
#: The label of the alignment ops' rows in the dtype column (their arrays' types are fixed).
_ALIGN_LABEL = "dna"
#: What to install for more than NumPy's reference to compare with, by op (prefix).
_MORE_BACKENDS = {
    "genomics.": (
        "prism-plugin-parasail (SIMD kernels), prism-plugin-numba (compiled, multi-threaded) or "
        "prism-plugin-torch (the GPU kernel), from plugins/ in Prism's repository"
    ),
    "": "prism-plugin-scipy or prism-plugin-torch, from plugins/ in Prism's repository",
}


class BenchError(PrismError, ValueError):
    """``prism bench`` was asked for something it cannot do; the message says what it can."""

    __module__ = "prism_core"


@dataclass(frozen=True)
class BenchRow:
    """One op, dtype and size: what each variant took, what Prism picks, and the ratios."""

    op: str
    dtype: str
    n: int
    case: TuneCase
    oracle: str | None
    picks: str | None
    decided_by: str
    prism_s: float | None
    oracle_s: float | None
    numpy_s: float | None
    #: Targets in the batch (``genomics.sw_align_batch``), else ``None``.
    batch: int | None = None
    #: Cell updates of one call (the alignment ops' work measure), else ``None``.
    cells: int | None = None
    #: Why a cell of the row is empty, or what it was measured against: ``""`` when nothing
    #: needs saying.
    note: str = ""

    @property
    def label(self) -> str:
        """The size as the table shows it: ``n``, or ``n x batch``."""
        return str(self.n) if self.batch is None else f"{self.n} x {self.batch}"

    @property
    def gcups(self) -> float | None:
        """Prism's giga cell updates per second (alignment ops), else ``None``."""
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

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "dtype": self.dtype,
            "n": self.n,
            "times": {m.variant: (None if m.error else m.seconds) for m in self.case.measurements},
            "errors": {m.variant: m.error for m in self.case.measurements if m.error},
            "tuned": self.case.decided,
            "oracle": self.oracle,
            "prism_picks": self.picks,
            "decided_by": self.decided_by,
            "prism_s": self.prism_s,
            "oracle_s": self.oracle_s,
            "numpy_s": self.numpy_s,
            "prism_vs_oracle": self.vs_oracle,
            "prism_vs_numpy": self.vs_numpy,
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
    """Everything ``prism bench`` measured, with the host it ran on."""

    host: dict[str, Any]
    rows: list[BenchRow] = field(default_factory=list)
    stored: int = 0
    store_path: str | None = None
    problems: list[str] = field(default_factory=list)
    #: What to install where only NumPy's reference ran (``prism bench genomics.align`` with no
    #: alignment plugin): nothing was compared.
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    quick: bool = True
    #: Tuned choices measured that could not be written to ``store_path`` (``problems`` says
    #: why): they last only as long as this process.
    unstored: int = 0
    #: The model's calibration fitted to the measurements (stored with the tuned choices).
    calibration: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        ops = sorted({r.op for r in self.rows})
        per_op = {
            op: {
                "prism_vs_oracle": geomean([r.vs_oracle or 0 for r in self.rows if r.op == op]),
                "prism_vs_numpy": geomean([r.vs_numpy or 0 for r in self.rows if r.op == op]),
            }
            for op in ops
        }
        return {
            "prism_vs_oracle": geomean([r.vs_oracle or 0 for r in self.rows]),
            "prism_vs_numpy": geomean([r.vs_numpy or 0 for r in self.rows]),
            "numpy_vs_oracle": geomean(
                [(r.numpy_s or 0) / r.oracle_s for r in self.rows if r.oracle_s]
            ),
            "per_op": per_op,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "quick": self.quick,
            "seconds": self.seconds,
            "stored": self.stored,
            "unstored": self.unstored,
            "store_path": self.store_path,
            "problems": self.problems,
            "notes": self.notes,
            "calibration": self.calibration,
            "summary": self.summary(),
            "rows": [r.as_dict() for r in self.rows],
        }


def _host() -> dict[str, Any]:
    from prism_core._knowledge.backend_registry import backends
    from prism_core._knowledge.host import present_devices

    present = present_devices()
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "devices": [
            {"device_type": d.device_type, "name": d.name, "index": d.index}
            for d in present.devices
        ],
        "backends": {b.name: b.version for b in backends() if b.available},
    }


def _numpy_runner(case_runners: Sequence[Runner]) -> Runner | None:
    return next((r for r in case_runners if r.backend == "numpy"), None)


def run_bench(
    *,
    quick: bool = True,
    ops: Sequence[str] | None = None,
    dtypes: Sequence[str] = DTYPES,
    budget_s: float | None = None,
    store: Any = True,
    progress: Callable[[int, int, str], None] | None = None,
) -> BenchReport:
    """Measure, tune and check the core ops (see the module docstring).

    ``store``: ``True``, the tuned choices go to this host's tuning cache; a ``TuningStore``,
    to that one; ``False``, nowhere.  Each case's choice is stored as soon as it is measured
    (an interrupt loses none already measured), the model's calibration once all are."""
    from prism_core._dispatch.dispatcher import explain
    from prism_core._knowledge.tuning import reload

    sizes = QUICK if quick else FULL
    aligning = GENOMICS_QUICK if quick else GENOMICS_FULL
    chosen = list(sizes) if not ops else [o for g in ops for o in GROUPS.get(g, (g,))]
    unknown = [o for o in chosen if o not in sizes and o not in aligning]
    if unknown:
        raise BenchError(
            f"--ops: {', '.join(unknown)} not benchmarked; choose among "
            f"{', '.join([*sizes, *GROUPS, *aligning])}"
        )
    for d in dtypes:
        if d not in DTYPES:
            raise BenchError(f"--dtypes: {d!r} not benchmarked; choose among {', '.join(DTYPES)}")
    per_case = budget_s if budget_s is not None else (0.25 if quick else 1.0)
    began = time.perf_counter()
    report = BenchReport(_host(), quick=quick)
    plan: list[tuple[str, str, int, int | None]] = []
    for op in dict.fromkeys(chosen):
        if op in aligning:
            plan.extend((op, _ALIGN_LABEL, n, batch) for n, batch in aligning[op])
        else:
            plan.extend((op, dtype, n, None) for dtype in dtypes for n in sizes[op])
    total = 2 * len(plan)
    tuned: list[tuple[str, str, int, int | None, tuple[Any, ...], TuneCase]] = []
    keeper = Keeper(None if store is True else store)
    for i, (op, dtype, n, batch) in enumerate(plan):
        if progress is not None:
            size = f"n={n}" if batch is None else f"n={n} batch={batch}"
            progress(i, total, f"tuning {op} {dtype} {size}")
        args = example_arguments(op, n, dtype, batch=batch)
        case, entry = tune_case(op, args, budget_s=per_case)
        tuned.append((op, dtype, n, batch, args, case))
        if entry is not None:
            keeper.keep([entry])
    calibration = _calibration(tuned, report.problems)
    report.calibration = calibration
    keeper.keep([], calibration)
    report.stored, report.unstored, report.store_path, problems = keeper.outcome()
    report.problems.extend(problems)
    if keeper.store is not None:
        reload()  # the checks below use what was stored
    for j, (op, dtype, n, batch, args, case) in enumerate(tuned):
        if progress is not None:
            progress(len(plan) + j, total, f"checking {op} {dtype} n={n}")
        row = _check(op, dtype, n, args, case, per_case, explain)
        if op in aligning:
            row = replace(row, batch=batch, cells=_cells(op, args))
        report.rows.append(row)
    alone: dict[str, list[str]] = {}  # what to install -> the ops that had one variant
    for op in dict.fromkeys(o for o, *_ in plan):
        cases = [case for o, *_, case in tuned if o == op]
        if all(c.decided == "only" for c in cases):
            what = next(v for k, v in _MORE_BACKENDS.items() if op.startswith(k))
            alone.setdefault(what, []).append(f"{op} ({cases[0].winner})")
    for what, only in alone.items():
        report.notes.append(
            f"one variant only can run here for {', '.join(only)}, so nothing was compared; for "
            f"others to compare with, install {what}"
        )
    if progress is not None:
        progress(total, total, "done")
    report.seconds = time.perf_counter() - began
    return report


def _cells(op: str, args: tuple[Any, ...]) -> int:
    """Cell updates of one call of an alignment op: the query's length times the target's
    (for a batch, times all targets' letters)."""
    return int(args[0].shape[0]) * int(args[1].shape[0])


def _calibration(
    tuned: Sequence[tuple[str, str, int, int | None, tuple[Any, ...], TuneCase]],
    problems: list[str],
) -> dict[str, Any]:
    """The performance model calibrated to the fastest time of each case (StarPU-style: per
    device type and op, an efficiency and an overhead), as data for the tuning cache; the
    model's modelled choices (between devices, under policies) use it from then on."""
    from prism_core._knowledge.model import ModelError, PerformanceModel

    measurements = []
    for op, dtype, _n, _batch, _args, case in tuned:
        timed = [m for m in case.measurements if m.error is None and m.device is not None]
        if not timed:
            continue
        best = min(timed, key=lambda m: m.seconds)
        # The alignment ops compute in integers: their work (cell updates) is rated at the
        # device's int32 throughput.
        kind = "int32" if op.startswith("genomics.") else dtype
        measurements.append((op, case.shapes, kind, best.device, best.seconds))
    if not measurements:
        return {}
    try:
        return PerformanceModel().calibrate(measurements).calibration
    except (ModelError, ValueError, TypeError) as exc:
        problems.append(f"the performance model could not be calibrated: {exc}")
        return {}


def _check(
    op: str,
    dtype: str,
    n: int,
    args: tuple[Any, ...],
    case: TuneCase,
    budget_s: float,
    explain: Callable[..., Any],
) -> BenchRow:
    """Phase 2: Prism's automatic call, the oracle's variant and NumPy's, interleaved."""
    timed = [m for m in case.measurements if m.error is None]
    decision = explain(op, *args)
    picks = decision.chosen
    runners = {r.variant: r for r in candidates(op, args).runners}
    note = ""
    if case.decided == "only" and len(runners) == 1:
        # Nothing to choose: Prism is timed against the one variant there is.
        oracle = next(iter(runners))
        note = f"{oracle} is the only variant that can run here"
    elif not timed:
        errors = "; ".join(f"{m.variant}: {m.error}" for m in case.measurements if m.error)
        note = f"no variant could be timed ({errors or 'none can run here'})"
        return BenchRow(
            op, dtype, n, case, None, picks, decision.decided_by, None, None, None, note=note
        )
    else:
        oracle = min(timed, key=lambda m: m.seconds).variant
    fn = get_op(op).function
    contenders = [Runner("prism", "", None, lambda: fn(*args))]
    if oracle in runners:
        contenders.append(runners[oracle])
    numpy = _numpy_runner(list(runners.values()))
    if numpy is not None and numpy.variant != oracle:
        contenders.append(numpy)
    got = {m.variant: m for m in measure(contenders, budget_s=budget_s, min_rounds=5)}

    def secs(name: str | None) -> float | None:
        m = got.get(name) if name else None
        return None if m is None or m.error else m.seconds

    return BenchRow(
        op,
        dtype,
        n,
        case,
        oracle,
        picks,
        decision.decided_by,
        secs("prism"),
        secs(oracle),
        secs(numpy.variant if numpy is not None else None),
        note=note,
    )


# -- output -----------------------------------------------------------------------------------


def _t(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "-"
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def _r(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


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
                r.decided_by,
                _t(r.prism_s),
                _r(r.vs_oracle),
                _r(r.vs_numpy),
            ]
        )
    return rows


def plot(report: BenchReport, path: str) -> None:
    """Time against size per variant, one panel per op and dtype, Prism's choice marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r.op, r.dtype) for r in report.rows})
    cols = 2
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(11, 3.2 * rows), squeeze=False)
    for ax, (op, dtype) in zip(axes.flat, panels, strict=False):
        mine = [r for r in report.rows if r.op == op and r.dtype == dtype]
        variants = sorted({m.variant for r in mine for m in r.case.measurements})
        for v in variants:
            xs, ys = [], []
            for r in mine:
                t = r.case.seconds(v)
                if t is not None:
                    xs.append(r.n)
                    ys.append(t)
            if xs:
                ax.plot(xs, ys, marker="o", markersize=3, linewidth=1, label=v)
        px = [r.n for r in mine if r.prism_s is not None]
        py = [r.prism_s for r in mine if r.prism_s is not None]
        ax.plot(px, py, linestyle="none", marker="*", markersize=11, color="black", label="Prism")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{op} {dtype}")
        ax.set_xlabel("n")
        ax.set_ylabel("seconds per call")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
