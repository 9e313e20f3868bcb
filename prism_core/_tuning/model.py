"""The performance model: how long an op takes on a device, predicted from its description.

A roofline (Williams, Waterman and Patterson, CACM 2009) with a launch latency and the transfer
over the host link, calibrated per (device type, op) as StarPU fits its per-device models::

    seconds = launch + overhead + max(flops / peak, bytes / bandwidth) / efficiency + transfer

``peak`` is the rate of the execution unit the work runs on (``Work.unit``): a matrix product
gets the device's matrix rate, all other work its vector rate, where the description's
``throughput`` gives them (``peak_tflops`` otherwise).

Every number the model assumes is a module constant below, with its source; docs/performance.md
("The performance model") says where each figure comes from and how good the predictions are.
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, overload

from prism_core._tuning.work import Work, declared_ops, work_of
from prism_core.kernel.config import usable_cpus
from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.description.dtypes import DType
from prism_core.kernel.description.dtypes import dtype as to_dtype
from prism_core.kernel.description.throughput import rate_for
from prism_core.kernel.errors import PrismError, did_you_mean
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.description.library import DeviceLibrary

__all__ = [
    "Figures",
    "ModelError",
    "PerformanceModel",
    "PerformanceRow",
    "PerformanceTable",
    "Prediction",
    "WorkloadPattern",
]

# -- what the model assumes where a description is silent ---------------------------------------

#: Launch latency per call, by device kind.  A CPU call of a compiled library on a small array
#: costs about a microsecond of call overhead (a 4x4 NumPy matmul took 1.4 us in
#: benchmarks/results/backends-2026-11-23.md).  A CUDA kernel launch costs 3 to 5 us from the
#: host as commonly measured, before any framework's own dispatch; the other accelerators
#: (NPUs, TPUs, dataflow chips) are given the GPU figure for want of a better one.  A
#: description overrides it with the attribute ``launch_latency_us``.
LAUNCH_S = {"cpu": 1e-6}
LAUNCH_S_OTHER = 5e-6
#: Main-memory bandwidth of a CPU whose description gives none, per core (GB/s): one core of a
#: current x86 or Arm server streams 10 to 20 GB/s from DRAM (single-core STREAM triad), so
#: this errs low; without a core count, ``CPU_BANDWIDTH_GBPS``.
CPU_BANDWIDTH_GBPS_PER_CORE = 10.0
CPU_BANDWIDTH_GBPS = 20.0
#: Clock assumed for a CPU with no ``clock_mhz`` (and, for the host, no ``/proc/cpuinfo``).
ASSUMED_CLOCK_MHZ = 2500.0
#: Host link per direction for an accelerator whose description has no ``host_link``: PCIe 4.0
#: x16, 64 GB/s both directions together.
ASSUMED_HOST_LINK_GBPS = 32.0
#: Floating-point operations per cycle per core (fp64, fp32), by vector ISA: two FMA pipes of
#: the vector width, each FMA two operations.  x86-64-v4 (AVX-512): 2 x 8 x 2 = 32 fp64;
#: x86-64-v3 (AVX2 + FMA): 2 x 4 x 2 = 16; x86-64 and -v2 (SSE2, no FMA): one add and one
#: multiply of 2 lanes = 4; AArch64 with NEON: 2 x 2 x 2 = 8.  Cores with fewer FMA pipes
#: (many client and efficiency cores) reach half.
FLOPS_PER_CYCLE = {
    "x86-64-v4": (32, 64),
    "x86-64-v3": (16, 32),
    "x86-64-v2": (4, 8),
    "aarch64": (8, 16),
}
#: Data types without a figure of their own that are computed at another type's rate: complex
#: arithmetic in real operations of its component type (the work counts them), integers at the
#: float rate of their width, half-precision types on a CPU (which converts them to fp32).
FALLBACK_DTYPE = {
    "complex64": "fp32",
    "complex128": "fp64",
    "int64": "fp64",
    "int32": "fp32",
    "int16": "fp32",
    "int8": "fp32",
    "uint8": "fp32",
    "uint16": "fp32",
    "uint32": "fp32",
    "uint64": "fp64",
    "bool": "fp32",
}
CPU_FALLBACK_DTYPE = {"fp16": "fp32", "bf16": "fp32"}

#: The sources a figure may have, most trusted last.
SOURCES = ("assumed", "derived", "description", "calibrated")
BOUNDS = ("compute", "memory", "latency", "transfer")


@home("prism_core.tuning")
class ModelError(PrismError, LookupError):
    """The model lacks what it needs for a prediction: the op declares no work, or the device
    has no figure for the data type (or no memory bandwidth) and none can be derived."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0])


# -- figures ------------------------------------------------------------------------------------


@home("prism_core.tuning")
@dataclass(frozen=True)
class Figures:
    """The numbers the model uses for one device type, each with where it came from.

    ``peak_tflops`` per data type (Prism's vocabulary: ``fp64``, ``fp32``, ...), ``bandwidth_gbps``
    of main memory (GB/s, 10^9 B/s), ``launch_s`` per call, ``efficiency`` per op (calibrated; 1
    where absent).  The host link, one way, in GB/s (``None`` for a CPU): ``host_link_gbps``
    host to device from ordinary (pageable) host memory, ``host_link_d2h_gbps`` device to host
    into pageable memory, ``host_link_pinned_gbps`` and ``host_link_pinned_d2h_gbps`` the same
    from and into page-locked (pinned) memory.  A description gives one figure per direction,
    used for all four; a calibration (``prism bench --calibrate``) measures each.
    ``throughput`` holds the rates per execution unit the description gives,
    ``{"matrix": {"fp64": 67.0}, "vector": {"fp64": 34.0}}`` (:meth:`peak` says which applies).
    ``sources`` maps each figure (``"peak_tflops.fp64"``, ``"throughput.vector.fp64"``,
    ``"bandwidth_gbps"``, ``"launch_s"``, ``"host_link_gbps"``, ``"host_link_d2h_gbps"``,
    ``"efficiency.matmul"``) to ``"description"``, ``"derived"``, ``"assumed"`` or
    ``"calibrated"``; ``notes`` says how each derived or assumed figure was obtained;
    ``calibrated_at`` when this host's calibration of the device type was measured.
    """

    device_type: str
    kind: str | None
    peak_tflops: Mapping[str, float]
    bandwidth_gbps: float | None
    launch_s: float
    host_link_gbps: float | None
    efficiency: Mapping[str, float] = field(default_factory=dict)
    overhead_s: Mapping[str, float] = field(default_factory=dict)
    tdp_watts: float | None = None
    usd_per_hour: float | None = None
    compute_units: int | None = None
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)
    throughput: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    host_link_d2h_gbps: float | None = None
    host_link_pinned_gbps: float | None = None
    host_link_pinned_d2h_gbps: float | None = None
    #: Seconds since the epoch; ``None``: not calibrated, or the calibration does not say.
    calibrated_at: float | None = None

    @property
    def is_cpu(self) -> bool:
        return self.kind == "cpu"

    @property
    def calibrated(self) -> tuple[str, ...]:
        """The figures measured on this host (``sources`` says ``"calibrated"``), sorted."""
        return tuple(sorted(k for k, v in self.sources.items() if v == "calibrated"))

    def transfer_s(self, work: Work, count: int = 1) -> float:
        """Seconds to move ``work``'s arguments to the device and its results back, each of
        ``count`` devices over its own link: the arguments at :attr:`host_link_gbps`, the
        results at :attr:`host_link_d2h_gbps`; work that does not say which of its bytes are
        results (``out_bytes``) moves all of them at the slower direction.  0 for a CPU or a
        device without a host link."""
        to_device = self.host_link_gbps
        if self.is_cpu or not to_device:
            return 0.0
        back = self.host_link_d2h_gbps or to_device
        if work.out_bytes is None:
            return work.moved_bytes / (min(to_device, back) * 1e9 * count)
        return (work.moved_bytes - work.out_bytes) / (to_device * 1e9 * count) + work.out_bytes / (
            back * 1e9 * count
        )

    def peak(self, vocab: str, unit: str | None = None) -> tuple[float, str] | None:
        """The peak used for data type ``vocab`` and the figure it is (``"fp32"`` for
        ``complex64``), or ``None`` when there is none.  With ``unit`` (``"matrix"`` or
        ``"vector"``), that unit's rate: see :meth:`rate`."""
        found = self.rate(vocab, unit)
        return None if found is None else (found[0], found[1])

    def rate(self, vocab: str, unit: str | None) -> tuple[float, str, str | None] | None:
        """``(TFLOP/s, figure, unit)`` for work on ``unit`` (``"matrix"``, ``"vector"``) in
        data type ``vocab``, or ``None`` when the device has no figure for it.

        The figure is ``vocab`` when the device has one for it (in ``peak_tflops`` or, for
        ``unit``, in ``throughput``), else its fallback (:data:`FALLBACK_DTYPE`: ``fp32`` for
        ``complex64``).  Its rate follows ``prism_core.kernel.description.throughput.rate_for``: the
        rate ``throughput`` gives ``unit``; else the headline ``peak_tflops`` figure (returned
        unit ``None``), the fastest unit's, so vector work gets the matrix rate only where the
        description gives no vector rate (as in format 1); else, for matrix work, the vector
        rate.  ``unit=None``: the headline figure alone.
        """
        fallback = FALLBACK_DTYPE.get(vocab) or (
            CPU_FALLBACK_DTYPE.get(vocab) if self.is_cpu else None
        )
        rates = self.throughput if unit is not None else {}
        for name in (vocab, fallback):
            if name is None:
                continue
            found = rate_for(rates, self.peak_tflops, name, unit or "vector")
            if found is not None:
                return found[0], name, found[1]
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "device_type": self.device_type,
            "kind": self.kind,
            "peak_tflops": dict(self.peak_tflops),
            "bandwidth_gbps": self.bandwidth_gbps,
            "launch_s": self.launch_s,
            "host_link_gbps": self.host_link_gbps,
            "host_link_d2h_gbps": self.host_link_d2h_gbps,
            "host_link_pinned_gbps": self.host_link_pinned_gbps,
            "host_link_pinned_d2h_gbps": self.host_link_pinned_d2h_gbps,
            "calibrated_at": self.calibrated_at,
            "efficiency": dict(self.efficiency),
            "overhead_s": dict(self.overhead_s),
            "tdp_watts": self.tdp_watts,
            "usd_per_hour": self.usd_per_hour,
            "throughput": {unit: dict(rates) for unit, rates in self.throughput.items()},
            "sources": dict(self.sources),
            "notes": dict(self.notes),
        }


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


# -- workload patterns ----------------------------------------------------------------------------

PARALLELISM = ("high", "medium", "low")
ACCESS_PATTERNS = ("sequential", "structured", "strided", "random")
DIVERGENCE = ("low", "medium", "high")
#: Fraction of the memory bandwidth a pattern of access uses: whole cache lines for sequential
#: and structured (tiled, stencil) access, about half of each line for strided access, one 8-byte
#: word of each 64-byte line for random access.
ACCESS_FACTOR = {"sequential": 1.0, "structured": 1.0, "strided": 0.5, "random": 0.125}
#: Fraction of the peak left by branch divergence on devices that execute in lockstep (GPUs'
#: warps, and the vector and systolic units of the other accelerators): each level of divergence
#: runs both sides of a branch.  CPUs (branch predictors, independent cores) are not slowed.
DIVERGENCE_FACTOR = {"low": 1.0, "medium": 0.5, "high": 0.25}
#: Fraction of the compute units a workload keeps busy: all for "high", half for "medium", one
#: for "low" (1 / compute_units; all when the description has no compute_units).
PARALLELISM_FACTOR = {"high": 1.0, "medium": 0.5}


def _choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
        raise ValueError(
            f"register_pattern(): {what} must be one of {', '.join(map(repr, allowed))}; got "
            f"{value!r}{hint}"
        )
    return value


@home("prism_core.tuning")
@dataclass(frozen=True)
class WorkloadPattern:
    """A workload that is not one op, characterised as the seed's ``register_pattern`` does:
    ``compute_intensity`` flops per byte of data, how parallel it is, how it reads memory and
    how much its branches diverge, in data type ``dtype``."""

    name: str
    compute_intensity: float
    parallelism_degree: str = "high"
    memory_access_pattern: str = "sequential"
    branch_divergence: str = "low"
    dtype: str = "fp32"

    def work(self, data_size: float) -> Work:
        return Work(self.compute_intensity * data_size, data_size)

    def compute_factor(self, figures: Figures) -> float:
        if self.parallelism_degree == "low":
            share = 1.0 / figures.compute_units if figures.compute_units else 1.0
        else:
            share = PARALLELISM_FACTOR[self.parallelism_degree]
        divergence = 1.0 if figures.is_cpu else DIVERGENCE_FACTOR[self.branch_divergence]
        return share * divergence

    def bandwidth_factor(self) -> float:
        return ACCESS_FACTOR[self.memory_access_pattern]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "compute_intensity": self.compute_intensity,
            "parallelism_degree": self.parallelism_degree,
            "memory_access_pattern": self.memory_access_pattern,
            "branch_divergence": self.branch_divergence,
            "dtype": self.dtype,
        }


# -- calibration --------------------------------------------------------------------------------

_CALIBRATION_KEYS = (
    "gflops",
    "bandwidth_gbs",
    "launch_us",
    "host_link_gbs",
    "h2d_gbs",
    "d2h_gbs",
    "h2d_pinned_gbs",
    "d2h_pinned_gbs",
    "efficiency",
    "overhead_us",
    "measured_at",
    "backend",
)
#: The calibration's host-link keys and the :class:`Figures` field each sets.  The older
#: ``host_link_gbs`` (one figure for both directions, from pageable memory) is read where these
#: are absent.
LINK_KEYS = {
    "h2d_gbs": "host_link_gbps",
    "d2h_gbs": "host_link_d2h_gbps",
    "h2d_pinned_gbs": "host_link_pinned_gbps",
    "d2h_pinned_gbs": "host_link_pinned_d2h_gbps",
}


def _positive(value: Any, where: str, *, zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"calibration{where} must be a number, got {value!r}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        raise ValueError(
            f"calibration{where} must be a finite number {'>=' if zero else '>'} 0, got {value!r}"
        )
    return float(value)


def check_calibration(calibration: Any) -> dict[str, dict[str, Any]]:
    """A validated deep copy of a calibration mapping; ``TypeError``/``ValueError`` naming the
    key at fault.

    ``{device_type: {"gflops": {dtype: GFLOP/s}, "bandwidth_gbs": GB/s, "launch_us": us,
    "h2d_gbs": GB/s, "d2h_gbs": GB/s, "h2d_pinned_gbs": GB/s, "d2h_pinned_gbs": GB/s,
    "efficiency": {op: fraction of the roofline}, "overhead_us": {op: us per call},
    "measured_at": seconds since the epoch, "backend": "torch 2.11.0"}}``; every key is
    optional.  The link keys are one direction each (host to device, device to host) from and
    into pageable or pinned host memory; ``host_link_gbs``, which older calibrations hold, is
    one figure for both pageable directions.  ``backend`` says what measured the device.
    """
    if not isinstance(calibration, Mapping):
        raise TypeError(
            "calibration must be a mapping {device_type: {...}} (as PerformanceModel.calibration "
            f"gives), got {type(calibration).__name__}"
        )
    out: dict[str, dict[str, Any]] = {}
    for device_type, entry in calibration.items():
        if not isinstance(device_type, str):
            raise TypeError(f"calibration keys are device types (strings), got {device_type!r}")
        if not isinstance(entry, Mapping):
            raise TypeError(
                f"calibration[{device_type!r}] must be a mapping with keys "
                f"{', '.join(_CALIBRATION_KEYS)}; got {entry!r}"
            )
        checked: dict[str, Any] = {}
        for key, value in entry.items():
            where = f"[{device_type!r}][{key!r}]"
            if key not in _CALIBRATION_KEYS:
                raise ValueError(
                    f"calibration{where}: unknown key{did_you_mean(str(key), _CALIBRATION_KEYS)}; "
                    f"the keys are {', '.join(_CALIBRATION_KEYS)}"
                )
            if key == "backend":
                if not isinstance(value, str) or not value.strip():
                    raise TypeError(
                        f"calibration{where} must be the name of what measured the device "
                        f"(a non-empty string), got {value!r}"
                    )
                checked[key] = value
            elif key in ("gflops", "efficiency", "overhead_us"):
                if not isinstance(value, Mapping):
                    raise TypeError(f"calibration{where} must be a mapping, got {value!r}")
                per: dict[str, float] = {}
                for name, number in value.items():
                    if not isinstance(name, str):
                        raise TypeError(f"calibration{where} keys must be strings, got {name!r}")
                    if key == "gflops":
                        to_dtype(name)  # an unknown data type is a ValueError naming them all
                    per[name] = _positive(number, f"{where}[{name!r}]", zero=key == "overhead_us")
                checked[key] = per
            else:
                checked[key] = _positive(value, where, zero=key in ("launch_us", "measured_at"))
        out[device_type] = checked
    return out


Measurement = tuple[Any, Sequence[Sequence[int]], Any, Any, float]

# -- the model ----------------------------------------------------------------------------------

_DETECT: Any = object()


def _proc_cpu_mhz() -> float | None:
    """The highest ``cpu MHz`` of ``/proc/cpuinfo`` (Linux), or ``None``."""
    best: float | None = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, sep, value = line.partition(":")
                if sep and key.strip() == "cpu MHz":
                    try:
                        mhz = float(value)
                    except ValueError:
                        continue
                    best = mhz if best is None else max(best, mhz)
    except OSError:
        return None
    return best if best and best > 0 else None


def _vector_isa(description: DeviceDescription) -> str | None:
    """The row of :data:`FLOPS_PER_CYCLE` for a CPU description: from its ISA level, else from
    the CPU flags its detection lists."""
    isa = (description.isa or "").lower()
    flags = description.cpu_flags
    if isa.startswith("x86-64-v4") or "avx512f" in flags:
        return "x86-64-v4"
    if isa.startswith("x86-64-v3") or {"avx2", "fma"} <= flags:
        return "x86-64-v3"
    if isa.startswith("x86-64") or "sse2" in flags:
        return "x86-64-v2"
    if isa.startswith(("armv8", "armv9", "aarch64")) or "asimd" in flags:
        return "aarch64"
    return None


def _resolve_dtype(dtype: Any) -> DType:
    try:
        return to_dtype(dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"dtype: {exc} (a NumPy dtype, its name such as 'float32', or Prism's name "
            "such as 'fp32')"
        ) from None


def _count(count: Any, where: str) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"{where}: count must be a positive int (devices), got {count!r}")
    return count


@home("prism_core.tuning")
class PerformanceModel:
    """Predicts the time of ops and workloads on described devices, present or not.

    ``calibration``: measured figures per device type, as :meth:`calibrate` returns them and
    :attr:`calibration` gives them back (JSON-serialisable)::

        {"generic.x86-64-v3": {"gflops": {"fp64": 60.0, "fp32": 120.0}, "bandwidth_gbs": 12.0,
                               "launch_us": 1.0, "efficiency": {"matmul": 0.7},
                               "overhead_us": {"linalg.svd": 90.0}}}

    ``library``: where device types given as strings are looked up (default: the default
    library).  ``host_device_type``: the CPU description this host matches, whose missing
    figures are derived from the host itself (its CPU count and ``/proc/cpuinfo``'s clock);
    detected on first use by default, ``None`` for no host (deterministic predictions).
    """

    def __init__(
        self,
        calibration: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        library: DeviceLibrary | None = None,
        host_device_type: str | None = _DETECT,
    ) -> None:
        self._calibration = check_calibration(calibration or {})
        self._library = library
        if host_device_type not in (_DETECT, None) and not isinstance(host_device_type, str):
            raise TypeError(
                "host_device_type must be a device type (a string) or None, got "
                f"{host_device_type!r}"
            )
        self._host: Any = host_device_type
        self._patterns: dict[str, WorkloadPattern] = {}
        self._figures: dict[tuple[int, str], tuple[DeviceDescription, Figures]] = {}

    def __repr__(self) -> str:
        calibrated = ", ".join(sorted(self._calibration)) or "none"
        return f"<PerformanceModel calibrated for: {calibrated}>"

    # -- devices ------------------------------------------------------------------------------
    @property
    def calibration(self) -> dict[str, dict[str, Any]]:
        """The calibration in force, as plain data (a deep copy; ``json.dumps`` takes it)."""
        return copy.deepcopy(self._calibration)

    @property
    def host_device_type(self) -> str | None:
        """The device type of this host's CPU description (detected once), or ``None``."""
        if self._host is _DETECT:
            from prism_core.kernel.host import host_cpu_instance

            try:
                self._host = host_cpu_instance(self._library).device_type
            except PrismError:
                self._host = None
        return self._host  # type: ignore[no-any-return]

    def description(self, device: Any) -> DeviceDescription:
        """The description of ``device``: a :class:`DeviceDescription`, a device instance (its
        ``description``), or a device type looked up in the library."""
        if isinstance(device, DeviceDescription):
            return device
        inner = getattr(device, "description", None)
        if isinstance(inner, DeviceDescription):
            return inner
        if isinstance(device, str):
            if self._library is not None:
                return self._library.get(device)
            from prism_core.kernel.devices import get_device

            return get_device(device)
        raise TypeError(
            "device must be a device type such as 'nvidia.h100-sxm', a DeviceDescription or a "
            f"device instance; got {device!r} ({type(device).__name__})"
        )

    def figures(self, device: Any) -> Figures:
        """Every figure the model uses for ``device``, each with its source (see
        :class:`Figures`)."""
        desc = self.description(device)
        key = (id(desc), desc.device_type)
        cached = self._figures.get(key)
        if cached is not None and cached[0] is desc:
            return cached[1]
        figures = self._make_figures(desc)
        self._figures[key] = (desc, figures)
        return figures

    def _make_figures(self, desc: DeviceDescription) -> Figures:
        sources: dict[str, str] = {}
        notes: dict[str, str] = {}
        kind = desc.kind
        is_host = kind == "cpu" and desc.device_type == self.host_device_type
        cores: int | None = desc.compute_units
        if cores is None and is_host:
            # Logical CPUs: an SMT host's peak is overstated (calibration corrects it).
            cores = usable_cpus()
            notes["compute_units"] = f"{cores} CPUs this process may use (host)"

        peaks: dict[str, float] = {}
        for vocab, value in desc.peak_tflops.items():
            peaks[vocab] = float(value)
            sources[f"peak_tflops.{vocab}"] = "description"
        rates: dict[str, dict[str, float]] = {}
        for entry in desc.throughput:
            rates.setdefault(entry.unit, {})[entry.data_type] = entry.tflops
            sources[f"throughput.{entry.unit}.{entry.data_type}"] = "description"
        if kind == "cpu" and not {"fp64", "fp32"} <= set(peaks):
            self._derive_cpu_peaks(desc, cores, is_host, peaks, sources, notes)

        bandwidth: float | None = None
        main = desc.memory_level("global") or next(
            (m for m in desc.memory if m.bandwidth_gbps is not None), None
        )
        if main is not None and main.bandwidth_gbps is not None:
            bandwidth = float(main.bandwidth_gbps)
            sources["bandwidth_gbps"] = "description"
        elif kind == "cpu":
            if cores is not None:
                bandwidth = CPU_BANDWIDTH_GBPS_PER_CORE * cores
                notes["bandwidth_gbps"] = (
                    f"{cores} cores x {CPU_BANDWIDTH_GBPS_PER_CORE:g} GB/s (assumed per core)"
                )
            else:
                bandwidth = CPU_BANDWIDTH_GBPS
                notes["bandwidth_gbps"] = f"{CPU_BANDWIDTH_GBPS:g} GB/s assumed for a CPU"
            sources["bandwidth_gbps"] = "assumed"

        launch_us = desc.attribute("launch_latency_us")
        if isinstance(launch_us, (int, float)) and not isinstance(launch_us, bool):
            launch = float(launch_us) * 1e-6
            sources["launch_s"] = "description"
        else:
            launch = LAUNCH_S.get(kind or "", LAUNCH_S_OTHER)
            sources["launch_s"] = "assumed"
            notes["launch_s"] = f"{launch * 1e6:g} us, the default for kind {kind or 'unknown'}"

        # One way over the host links (``links``, else half of host_link's total of both ways).
        host_link: float | None = None
        if kind != "cpu":
            one_way = desc.host_bandwidth_per_direction()
            if one_way:
                host_link = one_way
                sources["host_link_gbps"] = "description"
                notes["host_link_gbps"] = (
                    f"half of {2 * one_way:g} GB/s, the total of both directions: "
                    + "; ".join(link.describe() for link in desc.links if link.kind == "host")
                )
            else:
                host_link = ASSUMED_HOST_LINK_GBPS
                sources["host_link_gbps"] = "assumed"
                notes["host_link_gbps"] = "PCIe 4.0 x16 assumed: 32 GB/s per direction"

        # Each direction and kind of host memory: the description's figure for all four, until
        # a calibration measures them.
        links: dict[str, float | None] = dict.fromkeys(LINK_KEYS.values(), host_link)
        for name in LINK_KEYS.values():
            if name != "host_link_gbps" and "host_link_gbps" in sources:
                sources[name] = sources["host_link_gbps"]
        efficiency: dict[str, float] = {}
        overhead: dict[str, float] = {}
        cal = self._calibration.get(desc.device_type, {})
        for vocab, gflops in cal.get("gflops", {}).items():
            name = to_dtype(vocab).vocab
            peaks[name] = gflops / 1e3
            sources[f"peak_tflops.{name}"] = "calibrated"
            # A calibrated rate is the data type's, whichever unit: it replaces the units' own.
            for unit, per_unit in rates.items():
                if per_unit.pop(name, None) is not None:
                    del sources[f"throughput.{unit}.{name}"]
        if "bandwidth_gbs" in cal:
            bandwidth = cal["bandwidth_gbs"]
            sources["bandwidth_gbps"] = "calibrated"
        if "launch_us" in cal:
            launch = cal["launch_us"] * 1e-6
            sources["launch_s"] = "calibrated"
        if "host_link_gbs" in cal:  # an older calibration: both pageable directions
            for name in ("host_link_gbps", "host_link_d2h_gbps"):
                links[name] = cal["host_link_gbs"]
                sources[name] = "calibrated"
        for key, name in LINK_KEYS.items():
            if key in cal:
                links[name] = cal[key]
                sources[name] = "calibrated"
        host_link = links["host_link_gbps"]
        for op, value in cal.get("efficiency", {}).items():
            efficiency[op] = value
            sources[f"efficiency.{op}"] = "calibrated"
        for op, value in cal.get("overhead_us", {}).items():
            overhead[op] = value * 1e-6
            sources[f"overhead_s.{op}"] = "calibrated"
        for key in list(notes):  # a calibrated figure needs no note on how it was guessed
            if sources.get(key) == "calibrated" or sources.get(f"peak_tflops.{key}") == (
                "calibrated"
            ):
                del notes[key]

        price = desc.data.get("cloud_price") or {}
        return Figures(
            device_type=desc.device_type,
            kind=kind,
            peak_tflops=MappingProxyType(peaks),
            bandwidth_gbps=bandwidth,
            launch_s=launch,
            host_link_gbps=host_link,
            efficiency=MappingProxyType(efficiency),
            overhead_s=MappingProxyType(overhead),
            tdp_watts=None if desc.tdp_watts is None else float(desc.tdp_watts),
            usd_per_hour=(
                None if price.get("usd_per_hour") is None else float(price["usd_per_hour"])
            ),
            compute_units=cores,
            sources=MappingProxyType(sources),
            notes=MappingProxyType(notes),
            throughput=MappingProxyType(
                {unit: MappingProxyType(per) for unit, per in rates.items() if per}
            ),
            host_link_d2h_gbps=links["host_link_d2h_gbps"],
            host_link_pinned_gbps=links["host_link_pinned_gbps"],
            host_link_pinned_d2h_gbps=links["host_link_pinned_d2h_gbps"],
            calibrated_at=cal.get("measured_at"),
        )

    @staticmethod
    def _derive_cpu_peaks(
        desc: DeviceDescription,
        cores: int | None,
        is_host: bool,
        peaks: dict[str, float],
        sources: dict[str, str],
        notes: dict[str, str],
    ) -> None:
        """cores x clock x flops per cycle, for the fp64/fp32 peaks a CPU description lacks."""
        isa = _vector_isa(desc)
        if isa is None or cores is None:
            missing = "its vector ISA (isa or detection.cpu.features)" if isa is None else ""
            if cores is None:
                missing += (" and " if missing else "") + "compute_units (its cores)"
            notes["peak_tflops"] = f"cannot be derived: the description lacks {missing}"
            return
        clock = desc.clock_mhz.get("base") or desc.clock_mhz.get("boost")
        clock_from = "clock_mhz"
        if clock is None and is_host:
            clock = _proc_cpu_mhz()
            clock_from = "/proc/cpuinfo"
        if clock is None:
            clock = ASSUMED_CLOCK_MHZ
            clock_from = "assumed"
        for vocab, per_cycle in zip(("fp64", "fp32"), FLOPS_PER_CYCLE[isa], strict=True):
            if vocab in peaks:
                continue
            peaks[vocab] = cores * clock * 1e6 * per_cycle / 1e12
            sources[f"peak_tflops.{vocab}"] = "derived"
            notes[f"peak_tflops.{vocab}"] = (
                f"{cores} cores x {clock:g} MHz ({clock_from}) x {per_cycle} {vocab} flops per "
                f"cycle ({isa})"
            )

    # -- predictions ----------------------------------------------------------------------------
    def predict(
        self,
        op: Any,
        shapes: Sequence[Sequence[int]],
        dtype: Any,
        device: Any,
        *,
        on_device: bool = True,
        count: int = 1,
    ) -> Prediction:
        """The predicted time of one call of ``op`` (a name, or an op with a ``name``) on arrays
        of ``shapes`` (one per array argument) of ``dtype``, on ``count`` devices of ``device``
        sharing the work evenly (ideal scaling: no communication between them is modelled).

        ``on_device=False``: the arguments start on the host and the results return to it, so
        a device that is not a CPU pays their transfer over its host link.  Raises
        :class:`ModelError` when the op declares no work or the device has no figure for the
        data type.
        """
        name = op if isinstance(op, str) else getattr(op, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"op must be an op name such as 'matmul' (or an Op), got {op!r}")
        dt = _resolve_dtype(dtype)
        work = work_of(name, shapes, dt.itemsize, complex_input=dt.kind == "c")
        if work is None:
            raise ModelError(
                f"{name!r} declares no work, so its time cannot be predicted"
                f"{did_you_mean(name, declared_ops())}; declare it with "
                f"prism_core.extending.declare_work({name!r}, fn), "
                "fn(shapes, itemsize) -> Work(flops, bytes)"
            )
        return self.predict_work(work, dt, device, on_device=on_device, count=count, name=name)

    def predict_work(
        self,
        work: Work,
        dtype: Any,
        device: Any,
        *,
        on_device: bool = True,
        count: int = 1,
        name: str = "work",
        compute_factor: float = 1.0,
        bandwidth_factor: float = 1.0,
    ) -> Prediction:
        """:meth:`predict` for declared ``work`` (``name`` keys the calibrated efficiency).
        ``compute_factor`` and ``bandwidth_factor`` scale the peak and the bandwidth (a
        workload pattern's utilisation)."""
        if not isinstance(work, Work):
            raise TypeError(f"work must be a prism_core.extending.Work, got {work!r}")
        count = _count(count, "predict")
        return self._predict(
            self.figures(device),
            work,
            _resolve_dtype(dtype),
            name,
            on_device=on_device,
            count=count,
            compute_factor=compute_factor,
            bandwidth_factor=bandwidth_factor,
        )

    def _predict(
        self,
        fig: Figures,
        work: Work,
        dt: DType,
        name: str,
        *,
        on_device: bool = True,
        count: int = 1,
        compute_factor: float = 1.0,
        bandwidth_factor: float = 1.0,
        calibrated: bool = True,
    ) -> Prediction:
        compute = 0.0
        peak_dtype: str | None = None
        peak_unit: str | None = None
        peak: float | None = None
        if work.flops > 0:
            found = fig.rate(dt.vocab, work.unit)
            if found is None:
                raise ModelError(self._no_peak(fig, dt.vocab, name))
            peak, peak_dtype, peak_unit = found
            compute = work.flops / (peak * 1e12 * compute_factor * count)
        memory = 0.0
        if work.bytes > 0:
            if fig.bandwidth_gbps is None:
                raise ModelError(
                    f"{fig.device_type} has no main-memory bandwidth, so {name} cannot be "
                    "predicted on it; add memory_hierarchy: [{level: global, bandwidth_gbps: "
                    f"...}}] to its description, or calibrate: {{{fig.device_type!r}: "
                    "{'bandwidth_gbs': ...}}"
                )
            memory = work.bytes / (fig.bandwidth_gbps * 1e9 * bandwidth_factor * count)
        transfer = 0.0 if on_device else fig.transfer_s(work, count)
        efficiency, overhead = 1.0, 0.0
        if calibrated:  # a figure for the op in this dtype, else for the op
            typed = f"{name}:{dt.vocab}"
            efficiency = fig.efficiency.get(typed, fig.efficiency.get(name, 1.0))
            overhead = fig.overhead_s.get(typed, fig.overhead_s.get(name, 0.0))
        launch = fig.launch_s
        seconds = launch + overhead + max(compute, memory) / efficiency + transfer
        terms = {
            "compute": compute / efficiency,
            "memory": memory / efficiency,
            "latency": launch + overhead,
            "transfer": transfer,
        }
        bound = max(BOUNDS, key=lambda b: terms[b])
        return Prediction(
            op=name,
            device_type=fig.device_type,
            dtype=dt.vocab,
            count=count,
            work=work,
            seconds=seconds,
            compute_s=compute,
            memory_s=memory,
            launch_s=launch,
            transfer_s=transfer,
            bound=bound,
            efficiency=efficiency,
            overhead_s=overhead,
            peak_dtype=peak_dtype,
            figures=fig,
            peak_unit=peak_unit,
            peak_tflops=peak,
        )

    @staticmethod
    def _no_peak(fig: Figures, vocab: str, name: str) -> str:
        figures = {*fig.peak_tflops, *(d for rates in fig.throughput.values() for d in rates)}
        have = ", ".join(sorted(figures)) or "none"
        why = fig.notes.get("peak_tflops")
        return (
            f"{fig.device_type} has no peak for {vocab} (peak_tflops.{vocab}), so {name} in "
            f"{vocab} cannot be predicted on it; its figures: {have}"
            + (f"; the peak {why}" if why else "")
            + f". Add peak_tflops.{vocab} to its description, or calibrate: "
            f"{{{fig.device_type!r}: {{'gflops': {{{vocab!r}: ...}}}}}}"
        )

    def row(
        self,
        prediction: Prediction,
        *,
        data_bytes: float | None = None,
        seconds: float | None = None,
        source: str = "modelled",
        name: str = "",
    ) -> PerformanceRow:
        """The table row of ``prediction``: cost and energy from the device's price and TDP.
        ``seconds`` (a measured time) replaces the predicted one; ``data_bytes`` (default: the
        work's moved bytes) is what throughput counts."""
        fig = prediction.figures or self.figures(prediction.device_type)
        data = prediction.work.moved_bytes if data_bytes is None else float(data_bytes)
        secs = prediction.seconds if seconds is None else float(seconds)
        steady = prediction.steady_s if seconds is None else secs
        n = prediction.count
        per_hour = None if fig.usd_per_hour is None else fig.usd_per_hour * n
        return PerformanceRow(
            device_type=prediction.device_type,
            count=n,
            seconds=secs,
            throughput=data / steady if steady > 0 else math.inf,
            cost_per_run=None if per_hour is None else per_hour * secs / 3600,
            cost_per_hour=per_hour,
            energy_j=None if fig.tdp_watts is None else fig.tdp_watts * n * secs,
            bound=prediction.bound if seconds is None else "measured",
            data_bytes=data,
            name=name,
            source=source,
            prediction=prediction,
        )

    # -- calibration ----------------------------------------------------------------------------
    def calibrate(
        self,
        measurements: Iterable[Measurement | Mapping[str, Any]],
        *,
        overhead: bool = True,
        per_dtype: bool = False,
    ) -> PerformanceModel:
        """A new model whose per-(device type, op) efficiency, and per-op overhead, are fitted
        to ``measurements``: ``(op, shapes, dtype, device, seconds)`` tuples (or mappings with
        those keys) of measured calls, the arguments on the device.

        Per device type and op (and per data type with ``per_dtype=True``: keys such as
        ``"linalg.svd:fp32"``, which take precedence over the op's own), against this model's
        roofline ``r`` (with its figures, without its efficiencies):

        * ``overhead=False``: ``efficiency = 1 / median((measured - launch) / r)``, the median
          ratio of measured to predicted time for the part of it the efficiency scales; no
          overhead;
        * ``overhead=True`` (default): ``measured = launch + overhead + r / efficiency``, fitted
          by least squares on the relative error, so that the fixed cost of a call (argument
          checks, workspace queries) and the rate of the work are told apart.  With one size,
          or when the fit gives a negative overhead, the overhead is 0 and the efficiency the
          median's.

        The new model keeps this one's calibration and patterns; :attr:`calibration` gives the
        result as plain data, to store.
        """
        for name, flag in (("overhead", overhead), ("per_dtype", per_dtype)):
            if not isinstance(flag, bool):
                raise TypeError(f"calibrate(): {name} must be True or False, got {flag!r}")
        groups: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for i, item in enumerate(measurements):
            op, shapes, dtype, device, seconds = self._measurement(item, i)
            base = self._uncalibrated(op, shapes, dtype, device)
            roof = max(base.compute_s, base.memory_s)
            key = f"{base.op}:{base.dtype}" if per_dtype else base.op
            groups.setdefault((base.device_type, key), []).append((base.launch_s, roof, seconds))
        new = self.calibration
        for (device_type, op), points in groups.items():
            eff, over = _fit(points, overhead)
            entry = new.setdefault(device_type, {})
            entry.setdefault("efficiency", {})[op] = eff
            if overhead:
                entry.setdefault("overhead_us", {})[op] = over * 1e6
            elif op in entry.get("overhead_us", {}):
                del entry["overhead_us"][op]
        model = PerformanceModel(new, library=self._library, host_device_type=self._host)
        model._patterns = dict(self._patterns)
        return model

    def _uncalibrated(self, op: str, shapes: Any, dtype: Any, device: Any) -> Prediction:
        """The prediction with this model's figures but no efficiency or overhead."""
        dt = _resolve_dtype(dtype)
        work = work_of(op, shapes, dt.itemsize, complex_input=dt.kind == "c")
        if work is None:
            raise ModelError(
                f"calibrate(): {op!r} declares no work{did_you_mean(op, declared_ops())}; "
                "declare it with prism_core.extending.declare_work() first"
            )
        return self._predict(self.figures(device), work, dt, op, calibrated=False)

    @staticmethod
    def _measurement(item: Any, i: int) -> tuple[str, Any, Any, Any, float]:
        if isinstance(item, Mapping):
            try:
                values = tuple(item[k] for k in ("op", "shapes", "dtype", "device", "seconds"))
            except KeyError as exc:
                raise ValueError(
                    f"calibrate(): measurements[{i}] lacks {exc}; each is (op, shapes, dtype, "
                    "device, seconds) or a mapping with those keys"
                ) from None
        else:
            values = tuple(item)
            if len(values) != 5:
                raise ValueError(
                    f"calibrate(): measurements[{i}] must be (op, shapes, dtype, device, "
                    f"seconds); got {item!r}"
                )
        op, shapes, dtype, device, seconds = values
        op = op if isinstance(op, str) else getattr(op, "name", op)
        if not isinstance(op, str):
            raise TypeError(f"calibrate(): measurements[{i}]: op must be a name, got {op!r}")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
            raise ValueError(
                f"calibrate(): measurements[{i}]: seconds must be a positive number, got "
                f"{seconds!r}"
            )
        return op, shapes, dtype, device, float(seconds)

    # -- workload patterns ----------------------------------------------------------------------
    def register_pattern(
        self,
        name: str,
        compute_intensity: float,
        parallelism_degree: str = "high",
        memory_access_pattern: str = "sequential",
        branch_divergence: str = "low",
        *,
        dtype: Any = "fp32",
    ) -> WorkloadPattern:
        """Register a workload pattern (the seed's ``register_pattern``).

        :param compute_intensity: floating-point operations per byte of data (> 0).
        :param parallelism_degree: ``"high"`` (keeps every compute unit busy), ``"medium"``
            (half of them) or ``"low"`` (one).
        :param memory_access_pattern: ``"sequential"`` or ``"structured"`` (whole cache lines),
            ``"strided"`` (half the bandwidth) or ``"random"`` (an eighth).
        :param branch_divergence: ``"low"``, ``"medium"`` (half the peak) or ``"high"`` (a
            quarter), on devices that run in lockstep (all but CPUs).
        :param dtype: the data type the work computes in (default fp32).

        Registering a name again replaces the pattern.  Returns the pattern.
        """
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"register_pattern(): name must be a non-empty string, got {name!r}")
        if (
            isinstance(compute_intensity, bool)
            or not isinstance(compute_intensity, (int, float))
            or not math.isfinite(compute_intensity)
            or compute_intensity <= 0
        ):
            raise ValueError(
                "register_pattern(): compute_intensity must be a positive number of flops per "
                f"byte (such as 4.5), got {compute_intensity!r}"
            )
        pattern = WorkloadPattern(
            name=name,
            compute_intensity=float(compute_intensity),
            parallelism_degree=_choice(parallelism_degree, PARALLELISM, "parallelism_degree"),
            memory_access_pattern=_choice(
                memory_access_pattern, ACCESS_PATTERNS, "memory_access_pattern"
            ),
            branch_divergence=_choice(branch_divergence, DIVERGENCE, "branch_divergence"),
            dtype=_resolve_dtype(dtype).vocab,
        )
        self._patterns[name] = pattern
        return pattern

    @property
    def patterns(self) -> Mapping[str, WorkloadPattern]:
        return MappingProxyType(dict(self._patterns))

    def predict_performance(
        self,
        workload: str,
        data_size: float | None = None,
        available_hardware: Sequence[Any] = (),
        *,
        shapes: Sequence[Sequence[int]] | None = None,
        dtype: Any = None,
        on_device: bool = False,
    ) -> PerformanceTable:
        """Predict ``workload`` on each of ``available_hardware`` (``(device, count)`` pairs or
        devices), fastest first (the seed's ``predict_performance``).

        ``workload`` is a registered pattern, with ``data_size`` in bytes (flops =
        compute_intensity x data_size), or an op that declares its work, with ``shapes`` (and
        ``dtype``, default float64) instead.  ``count`` devices split the work evenly (ideal
        scaling: no communication between them is modelled).  The data starts on the host
        (``on_device=False``): an accelerator pays its transfer over the host link, each of the
        ``count`` over its own.  A device the model cannot predict (no figure for the data
        type) is listed in the table's ``excluded`` with the reason.
        """
        if not isinstance(workload, str):
            raise TypeError(
                f"predict_performance(): workload must be a pattern or op name, got {workload!r}"
            )
        hardware = hardware_entries(available_hardware, "predict_performance(): available_hardware")
        pattern = self._patterns.get(workload)
        if pattern is not None:
            if shapes is not None:
                raise ValueError(
                    f"predict_performance(): {workload!r} is a workload pattern: give data_size "
                    "(bytes), not shapes"
                )
            if (
                isinstance(data_size, bool)
                or not isinstance(data_size, (int, float))
                or not math.isfinite(data_size)
                or data_size <= 0
            ):
                raise ValueError(
                    "predict_performance(): data_size must be a positive number of bytes (such "
                    f"as 1e9), got {data_size!r}"
                )
            vocab = _resolve_dtype(dtype).vocab if dtype is not None else pattern.dtype
            work = pattern.work(float(data_size))
            data_bytes = float(data_size)
        else:
            if shapes is None:
                known = list(self._patterns)
                raise ModelError(
                    f"predict_performance(): {workload!r} is not a registered pattern"
                    f"{did_you_mean(workload, known)}; register it with register_pattern(), or "
                    "give shapes= to predict the op of that name"
                    + (f" (patterns: {', '.join(sorted(known))})" if known else "")
                )
            if data_size is not None:
                raise ValueError(
                    f"predict_performance(): {workload!r} is an op: give shapes (and dtype), "
                    "not data_size; its data size follows from the shapes"
                )
            vocab = _resolve_dtype("float64" if dtype is None else dtype).vocab
            work = None
            data_bytes = 0.0
        rows: list[PerformanceRow] = []
        excluded: list[tuple[str, str]] = []
        for device, count in hardware:
            try:
                if pattern is not None and work is not None:
                    fig = self.figures(device)
                    prediction = self.predict_work(
                        work,
                        vocab,
                        device,
                        on_device=on_device,
                        count=count,
                        name=workload,
                        compute_factor=pattern.compute_factor(fig),
                        bandwidth_factor=pattern.bandwidth_factor(),
                    )
                else:
                    assert shapes is not None
                    prediction = self.predict(
                        workload, shapes, vocab, device, on_device=on_device, count=count
                    )
                    data_bytes = prediction.work.moved_bytes
            except ModelError as exc:
                excluded.append((f"{_label(device)} x{count}", str(exc)))
                continue
            rows.append(
                self.row(prediction, data_bytes=data_bytes, name=self.description(device).name)
            )
        if not rows and excluded:
            raise ModelError(
                f"predict_performance(): no device could be predicted for {workload!r}: "
                + "; ".join(f"{label}: {why}" for label, why in excluded)
            )
        return PerformanceTable(
            workload, rows, data_bytes=data_bytes, dtype=vocab, excluded=excluded
        )


def _label(device: Any) -> str:
    if isinstance(device, str):
        return device
    return str(getattr(device, "device_type", device))


def hardware_entries(entries: Any, where: str) -> list[tuple[Any, int]]:
    """``[(device, count), ...]`` from pairs or bare devices; errors name ``where``."""
    if isinstance(entries, (str, DeviceDescription)) or not isinstance(entries, Iterable):
        raise TypeError(
            f"{where} must be a list of devices or (device, count) pairs, such as "
            f"[('nvidia.h100-sxm', 2), 'aws.trainium']; got {entries!r}"
        )
    out: list[tuple[Any, int]] = []
    for i, entry in enumerate(entries):
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(f"{where}[{i}] must be (device, count), got {entry!r}")
            device, count = entry
            out.append((device, _count(count, f"{where}[{i}]")))
        else:
            out.append((entry, 1))
    if not out:
        raise ValueError(f"{where} is empty: name at least one device")
    return out


def _fit(points: list[tuple[float, float, float]], overhead: bool) -> tuple[float, float]:
    """(efficiency, overhead seconds) for points (launch, roofline, measured): see
    :meth:`PerformanceModel.calibrate`."""
    # The roofline time of a call that does no work is 0: it says nothing about the rate.
    rated = [(launch, r, m) for launch, r, m in points if r > 0]
    if not rated:
        return 1.0, (
            max(0.0, statistics.median(m - launch for launch, _, m in points)) if overhead else 0.0
        )

    def median_fit() -> tuple[float, float]:
        # The measured time beyond the launch, over the roofline; a call measured faster than
        # the launch latency counts as a tenth of its roofline, not as a negative time.
        ratio = statistics.median(max(m - launch, 0.1 * r) / r for launch, r, m in rated)
        return 1.0 / ratio, 0.0

    if not overhead or len({r for _, r, _ in rated}) < 2:
        return median_fit()
    # measured = a + b r with a = launch + overhead and b = 1 / efficiency, by least squares on
    # the relative error (weights 1 / measured^2): small and large calls count alike.
    sw = sx = sy = sxx = sxy = 0.0
    for _, r, m in rated:
        w = 1.0 / (m * m)
        sw += w
        sx += w * r
        sy += w * m
        sxx += w * r * r
        sxy += w * r * m
    det = sw * sxx - sx * sx
    b = (sw * sxy - sx * sy) / det if det > 0 else 0.0
    a = (sy - b * sx) / sw
    launch = statistics.median(launch for launch, _, _ in rated)
    if b <= 0 or a < launch:
        return median_fit()
    return 1.0 / b, a - launch
