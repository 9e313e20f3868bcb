"""What the performance model answers: a :class:`Prediction` of one call, and the rows and
tables (:class:`PerformanceRow`, :class:`PerformanceTable`) that compare devices by time, cost
and energy.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from prism_core._tuning.figures import Figures
from prism_core._tuning.op_work import Work
from prism_core.kernel.public import home

__all__ = [
    "PerformanceRow",
    "PerformanceTable",
    "Prediction",
    "format_seconds",
    "render_rows",
]


@home("prism_core.tuning")
@dataclass(frozen=True)
class Prediction:
    """The predicted time of one call of ``op`` on ``count`` devices of ``device_type``.

    ``seconds = launch_s + overhead_s + max(compute_s, memory_s) / efficiency + transfer_s``;
    ``compute_s`` and ``memory_s`` are the roofline's terms at full efficiency.  ``bound`` names
    the largest term: ``"compute"``, ``"memory"``, ``"latency"`` (launch and overhead) or
    ``"transfer"``.  ``peak_dtype`` is the figure the compute time used (``fp32``
    for complex64), ``peak_tflops`` its rate per device (TFLOP/s, TOPS for integers) and
    ``peak_unit`` the execution unit whose rate it is (``"matrix"``, ``"vector"``), ``None``
    when the description's ``throughput`` gave none and the headline ``peak_tflops`` (or a
    derived or calibrated peak) was used; :attr:`rate_text` says it in words.  ``figures``
    holds every number with its source.
    """

    op: str
    device_type: str
    dtype: str
    count: int
    work: Work
    seconds: float
    compute_s: float
    memory_s: float
    launch_s: float
    transfer_s: float
    bound: str
    efficiency: float = 1.0
    overhead_s: float = 0.0
    peak_dtype: str | None = None
    figures: Figures | None = field(default=None, repr=False, compare=False)
    peak_unit: str | None = None
    peak_tflops: float | None = None

    @property
    def rate_text(self) -> str:
        """The rate the compute time used, in words: ``"matrix rate 67 TFLOP/s (fp64)"``,
        ``"vector rate 34 TFLOP/s (fp64)"``, ``"peak 51 TFLOP/s (fp64, peak_tflops; no matrix
        rate given)"``, ``"peak 0.157 TFLOP/s (fp64, derived)"``; ``"no arithmetic"`` for work
        without flops."""
        if self.peak_tflops is None or self.peak_dtype is None:
            return "no arithmetic"
        per = "TOPS" if self.peak_dtype.startswith(("int", "uint", "bool")) else "TFLOP/s"
        value = f"{self.peak_tflops:.4g} {per}"
        if self.peak_unit is not None:
            return f"{self.peak_unit} rate {value} ({self.peak_dtype})"
        sources = self.figures.sources if self.figures is not None else {}
        source = sources.get(f"peak_tflops.{self.peak_dtype}", "description")
        if source == "description":
            source = f"peak_tflops; no {self.work.unit} rate given"
        return f"peak {value} ({self.peak_dtype}, {source})"

    @property
    def device_s(self) -> float:
        """The time on the device, without the transfer."""
        return self.seconds - self.transfer_s

    @property
    def steady_s(self) -> float:
        """The time per call when calls follow each other in a pipeline: launches, device work
        and transfers overlap, so the slowest stage sets the pace."""
        return max(
            self.launch_s + self.overhead_s,
            max(self.compute_s, self.memory_s) / self.efficiency,
            self.transfer_s,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "device_type": self.device_type,
            "dtype": self.dtype,
            "count": self.count,
            "work": self.work.as_dict(),
            "seconds": self.seconds,
            "compute_s": self.compute_s,
            "memory_s": self.memory_s,
            "launch_s": self.launch_s,
            "overhead_s": self.overhead_s,
            "transfer_s": self.transfer_s,
            "bound": self.bound,
            "efficiency": self.efficiency,
            "peak_dtype": self.peak_dtype,
            "peak_unit": self.peak_unit,
            "peak_tflops": self.peak_tflops,
            "sources": None if self.figures is None else dict(self.figures.sources),
        }


# -- rows and tables ---------------------------------------------------------------------------


def format_seconds(seconds: float) -> str:
    """``0.000812`` -> ``"812 us"``: three significant digits in a fitting unit."""
    if seconds == 0:
        return "0 s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(seconds) >= scale or unit == "ns":
            return f"{seconds / scale:.3g} {unit}"
    raise AssertionError("unreachable")


@home("prism_core.tuning")
@dataclass(frozen=True)
class PerformanceRow:
    """One device (``count`` of them) in a table of predictions or a plan.

    ``seconds`` per run; ``throughput`` in bytes of data processed per second when runs follow
    each other (``data_bytes / steady seconds``); ``cost_per_run`` in US dollars
    (``cloud_price`` x count x seconds / 3600) and ``cost_per_hour`` (price x count), ``None``
    without a price; ``energy_j`` in joules at TDP (``tdp_watts`` x count x seconds: an upper
    bound, not a measurement), ``None`` without a TDP.  ``source`` is ``"modelled"`` or
    ``"measured"`` (a time measured on this host replaced the prediction).
    """

    device_type: str
    count: int
    seconds: float
    throughput: float
    cost_per_run: float | None
    cost_per_hour: float | None
    energy_j: float | None
    bound: str
    data_bytes: float
    name: str = ""
    source: str = "modelled"
    prediction: Prediction | None = field(default=None, repr=False, compare=False)

    @property
    def label(self) -> str:
        """``"nvidia.h100-sxm x1"``: how messages name the row."""
        return f"{self.device_type} x{self.count}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "device_type": self.device_type,
            "name": self.name,
            "count": self.count,
            "seconds": self.seconds,
            "throughput_bytes_per_s": self.throughput,
            "cost_per_run_usd": self.cost_per_run,
            "cost_per_hour_usd": self.cost_per_hour,
            "energy_j": self.energy_j,
            "bound": self.bound,
            "data_bytes": self.data_bytes,
            "source": self.source,
            "prediction": None if self.prediction is None else self.prediction.as_dict(),
        }


def render_rows(rows: Sequence[PerformanceRow], *, mark: PerformanceRow | None = None) -> str:
    """An aligned text table of ``rows`` (``mark``: the row to flag with ``*``)."""
    header = ["", "device", "count", "time", "throughput", "cost/run", "energy", "bound", "source"]
    lines: list[list[str]] = [header]
    for row in rows:
        lines.append(
            [
                "*" if row is mark else "",
                row.device_type,
                f"x{row.count}",
                format_seconds(row.seconds),
                f"{row.throughput / 1e9:.3g} GB/s",
                "-" if row.cost_per_run is None else f"${row.cost_per_run:.3g}",
                "-" if row.energy_j is None else f"{row.energy_j:.3g} J",
                row.bound,
                row.source,
            ]
        )
    if mark is None:  # no mark column
        lines = [line[1:] for line in lines]
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    right = {2, 3, 4, 5, 6} if mark is not None else {1, 2, 3, 4, 5}
    out = []
    for line in lines:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(line)
        ]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


@home("prism_core.tuning")
class PerformanceTable(Sequence[PerformanceRow]):
    """Predictions for one workload on several devices, fastest first.

    A sequence of :class:`PerformanceRow`; ``excluded`` lists the devices the model could not
    predict, each with the reason.  ``str()`` is an aligned text table.
    """

    def __init__(
        self,
        workload: str,
        rows: Iterable[PerformanceRow],
        *,
        data_bytes: float,
        dtype: str,
        excluded: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.workload = workload
        self.rows: tuple[PerformanceRow, ...] = tuple(
            sorted(rows, key=lambda r: (r.seconds, r.label))
        )
        self.data_bytes = data_bytes
        self.dtype = dtype
        self.excluded: tuple[tuple[str, str], ...] = tuple(excluded)

    @overload
    def __getitem__(self, index: int) -> PerformanceRow: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[PerformanceRow]: ...
    def __getitem__(self, index: int | slice) -> PerformanceRow | Sequence[PerformanceRow]:
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[PerformanceRow]:
        return iter(self.rows)

    @property
    def fastest(self) -> PerformanceRow | None:
        return self.rows[0] if self.rows else None

    def __str__(self) -> str:
        head = (
            f"{self.workload}: {self.data_bytes / 1e9:.3g} GB of data, {self.dtype}; "
            "throughput in GB/s (10^9 bytes of data per second), cost in USD at cloud_price, "
            "energy at TDP"
        )
        parts = [head, render_rows(self.rows)]
        parts += [f"not predicted: {label}: {why}" for label, why in self.excluded]
        return "\n".join(parts)

    def __repr__(self) -> str:
        return f"<PerformanceTable {self.workload!r}: {len(self.rows)} rows>"

    def as_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "data_bytes": self.data_bytes,
            "dtype": self.dtype,
            "rows": [r.as_dict() for r in self.rows],
            "excluded": [{"device": label, "reason": why} for label, why in self.excluded],
        }
