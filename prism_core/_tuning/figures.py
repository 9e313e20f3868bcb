"""The figures of the performance model: the numbers it uses for one device type, each with
where it came from (the description, derived from it, assumed, or calibrated on this host).

Every number the model assumes where a description is silent is a module constant below, with
its source; docs/performance.md ("The performance model") says where each figure comes from.
A calibration (``prism bench --calibrate``) replaces figures with rates measured on this host:
:func:`check_calibration` validates its format, :func:`make_figures` applies it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from prism_core._tuning.op_work import Work
from prism_core.kernel.config import usable_cpus
from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.description.dtypes import dtype as to_dtype
from prism_core.kernel.description.throughput import rate_for
from prism_core.kernel.errors import did_you_mean
from prism_core.kernel.public import home

__all__ = ["Figures", "check_calibration", "make_figures"]


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


# -- the figures of a description -------------------------------------------------------------


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


def make_figures(desc: DeviceDescription, cal: Mapping[str, Any], *, is_host: bool) -> Figures:
    """The figures of ``desc``: its description's, derived or assumed where it is silent, and
    replaced by those of ``cal``, the device type's entry of a calibration (as
    :func:`check_calibration` gives it).  ``is_host``: ``desc`` is this host's CPU, whose
    missing figures are derived from the host itself (its CPU count and ``/proc/cpuinfo``'s
    clock)."""
    sources: dict[str, str] = {}
    notes: dict[str, str] = {}
    kind = desc.kind
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
        _derive_cpu_peaks(desc, cores, is_host, peaks, sources, notes)

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
        if sources.get(key) == "calibrated" or sources.get(f"peak_tflops.{key}") == ("calibrated"):
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
        usd_per_hour=(None if price.get("usd_per_hour") is None else float(price["usd_per_hour"])),
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
