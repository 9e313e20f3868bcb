"""Throughput per execution unit and data type: the ``throughput`` key of a device file
(format 2), parsed, and the one rule for the rate of a unit, :func:`rate_for`.

An H100 SXM does 67 fp64 TFLOP/s on its matrix units and 34 on its vector units;
``peak_tflops`` stays the headline figure of each data type (the fastest unit's).
docs/device-files.md, "throughput".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from prism_core.kernel.public import home

__all__ = ["UNITS", "Throughput", "by_unit", "parse_throughput", "rate_for", "rates_above_peak"]

#: The execution units a throughput entry may name: ``matrix`` (Tensor Cores, Matrix Cores /
#: MFMA, XMX, TensorE, AMX, systolic arrays) and ``vector`` (CUDA cores, SIMD lanes, VALU).
UNITS = ("matrix", "vector")
#: How far a unit's rate may be above the headline peak (rounding in datasheets).
_TOLERANCE = 0.005


@home("prism_core.hardware")
@dataclass(frozen=True)
class Throughput:
    """The peak dense rate of one execution unit in one data type (an entry of ``throughput``).

    ``unit`` is ``"matrix"`` or ``"vector"``; ``tflops`` is TFLOP/s (TOPS for integer types),
    at the boost clock unless ``clock_mhz`` names the clock the figure assumes; ``accumulate``
    is the data type products are accumulated in (``fp32`` for fp16 inputs on Tensor Cores),
    where the source says.
    """

    unit: str
    data_type: str
    tflops: float
    accumulate: str | None = None
    clock_mhz: float | None = None

    def as_dict(self) -> dict[str, object]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def parse_throughput(entries: Iterable[Mapping[str, Any]]) -> tuple[Throughput, ...]:
    """The entries of a validated document's ``throughput``, in the file's order."""
    return tuple(
        Throughput(
            unit=str(e["unit"]),
            data_type=str(e["data_type"]),
            tflops=float(e["tflops"]),
            accumulate=e.get("accumulate"),
            clock_mhz=None if e.get("clock_mhz") is None else float(e["clock_mhz"]),
        )
        for e in entries
    )


def by_unit(entries: Iterable[Throughput]) -> dict[str, dict[str, float]]:
    """``{unit: {data_type: tflops}}`` of ``entries``."""
    out: dict[str, dict[str, float]] = {}
    for entry in entries:
        out.setdefault(entry.unit, {})[entry.data_type] = entry.tflops
    return out


def rate_for(
    rates: Mapping[str, Mapping[str, float]],
    peak_tflops: Mapping[str, float],
    dtype: str,
    unit: str,
) -> tuple[float, str | None] | None:
    """The rate of work on ``unit`` in ``dtype`` and the unit whose rate it is, from ``rates``
    (``{unit: {data_type: tflops}}``, :func:`by_unit`): the one rule of
    :meth:`DeviceDescription.peak_for` and the performance model.

    1. ``rates[unit][dtype]`` (unit ``unit``); 2. else the headline ``peak_tflops[dtype]`` (unit
    ``None``), the fastest unit's, so a vector rate not given is the matrix rate, as in format 1;
    3. else, for matrix work, the vector rate (unit ``"vector"``): a matrix product also runs on
    the vector units; 4. else ``None``.
    """
    if unit not in UNITS:
        raise ValueError(
            f"unit must be one of {', '.join(map(repr, UNITS))} (the execution unit); got {unit!r}"
        )
    given = rates.get(unit, {})
    if dtype in given:
        return float(given[dtype]), unit
    if dtype in peak_tflops:
        return float(peak_tflops[dtype]), None
    vector = rates.get("vector", {})
    if unit == "matrix" and dtype in vector:
        return float(vector[dtype]), "vector"
    return None


def rates_above_peak(data: Mapping[str, object]) -> Iterator[tuple[int, str, str]]:
    """``(index, data type, why)`` for each ``throughput`` entry of ``data`` (a document, or a
    resolved description's data) whose rate is above ``peak_tflops`` of its data type.

    ``peak_tflops`` is the fastest unit's dense rate, so no unit's dense rate is above it,
    whatever the unit accumulates in; a sparse figure is the dense one times the pattern's
    speed-up (``sparsity``), never a rate here."""
    peaks, entries = data.get("peak_tflops"), data.get("throughput")
    if not isinstance(peaks, Mapping) or not isinstance(entries, list):
        return
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        dtype, rate = str(entry.get("data_type")), entry.get("tflops")
        peak = peaks.get(dtype)
        if not isinstance(rate, (int, float)) or not isinstance(peak, (int, float)):
            continue
        if rate > peak * (1 + _TOLERANCE):
            yield (
                i,
                dtype,
                f"the {entry.get('unit')} rate of {dtype}, {rate:g} TFLOP/s, is above "
                f"peak_tflops.{dtype}, {peak:g}: peak_tflops is the fastest unit's dense rate, "
                f"so no unit's is higher; give at most {peak:g} (a dense figure, without "
                f"structured sparsity), or raise peak_tflops.{dtype}",
            )
