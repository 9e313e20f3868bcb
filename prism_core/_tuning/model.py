"""The performance model: how long an op takes on a device, predicted from its description.

A roofline (Williams, Waterman and Patterson, CACM 2009) with a launch latency and the transfer
over the host link, calibrated per (device type, op) as StarPU fits its per-device models::

    seconds = launch + overhead + max(flops / peak, bytes / bandwidth) / efficiency + transfer

``peak`` is the rate of the execution unit the work runs on (``Work.unit``): a matrix product
gets the device's matrix rate, all other work its vector rate, where the description's
``throughput`` gives them (``peak_tflops`` otherwise).

The figures it uses per device type, with every number it assumes, are ``figures.py``'s; what it
answers (predictions, rows and tables) ``predictions.py``'s; docs/performance.md ("The
performance model") says where each figure comes from and how good the predictions are.
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core._tuning.figures import Figures, check_calibration, make_figures
from prism_core._tuning.op_work import Work
from prism_core._tuning.predictions import PerformanceRow, PerformanceTable, Prediction
from prism_core._tuning.work import declared_ops, work_of
from prism_core._tuning.workload_patterns import (
    ACCESS_PATTERNS,
    DIVERGENCE,
    PARALLELISM,
    WorkloadPattern,
    checked_choice,
)
from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.description.dtypes import DType
from prism_core.kernel.description.dtypes import dtype as to_dtype
from prism_core.kernel.errors import PrismError, did_you_mean
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.description.library import DeviceLibrary

__all__ = ["ModelError", "PerformanceModel", "hardware_entries"]

#: The terms a prediction's ``bound`` names, in the order a tie is broken.
BOUNDS = ("compute", "memory", "latency", "transfer")


@home("prism_core.tuning")
class ModelError(PrismError, LookupError):
    """The model lacks what it needs for a prediction: the op declares no work, or the device
    has no figure for the data type (or no memory bandwidth) and none can be derived."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0])


Measurement = tuple[Any, Sequence[Sequence[int]], Any, Any, float]

# -- the model ----------------------------------------------------------------------------------

_DETECT: Any = object()


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
        is_host = desc.kind == "cpu" and desc.device_type == self.host_device_type
        cal = self._calibration.get(desc.device_type, {})
        return make_figures(desc, cal, is_host=is_host)

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
            parallelism_degree=checked_choice(
                parallelism_degree, PARALLELISM, "parallelism_degree"
            ),
            memory_access_pattern=checked_choice(
                memory_access_pattern, ACCESS_PATTERNS, "memory_access_pattern"
            ),
            branch_divergence=checked_choice(branch_divergence, DIVERGENCE, "branch_divergence"),
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
