"""The calibration step of ``prism bench``: the figures the performance model needs, measured on
this host's devices (``prism bench --calibrate`` runs it alone).

For the host CPU and for each other present device that an available backend drives, with the
data already on the device: the launch latency (a one-element ``add``, synchronised), and each
op family's time at three sizes (:data:`SIZES`), from which the model's per-op efficiency and
overhead are fitted (:meth:`PerformanceModel.calibrate`).  For a device with a host link, also
the link's rate each way, from ordinary (pageable) host memory and from page-locked (pinned)
memory where the backend offers it (``Backend.pinned_empty``).  The result is a calibration in
the model's format (``prism_core._tuning.figures.check_calibration``), which ``prism bench``
stores in the tuning cache under this host's fingerprint: another host, or another driver,
never reads it.  docs/performance.md, "The calibration step".
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prism_core.kernel.errors import PrismError, describe_exception
from prism_core.kernel.quantities import seconds_text

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.description.device import DeviceDescription

__all__ = [
    "DTYPES",
    "LINK_BYTES",
    "OPS",
    "SIZES",
    "CalibrationReport",
    "DeviceCalibration",
    "calibrate_host",
]

#: The op families measured, and their sizes ``n`` (``tuner.example_arguments``: n x n
#: matrices, vectors of n) on a CPU and on an accelerator: three each, from where a call's
#: fixed cost shows to where its rate does, and small enough that the step stays short (about
#: 1.1 s on a quiet 2-core CPU, float32 and float64; an accelerator's cases take milliseconds).
SIZES: dict[str, dict[str, tuple[int, ...]]] = {
    "cpu": {
        "matmul": (64, 256, 1024),
        "fft.fft": (1 << 12, 1 << 16, 1 << 20),
        "linalg.solve": (64, 256, 1024),
        "add": (1 << 12, 1 << 16, 1 << 20),
    },
    "accelerator": {
        "matmul": (256, 1024, 4096),
        "fft.fft": (1 << 14, 1 << 18, 1 << 20),
        "linalg.solve": (256, 1024, 4096),
        "add": (1 << 16, 1 << 20, 1 << 24),
    },
}
OPS = tuple(SIZES["cpu"])
DTYPES = ("float32", "float64")
#: The bytes copied each way to measure a host link: large enough that the copy's fixed cost
#: (tens of microseconds) is under 1 % of it at 30 GB/s.
LINK_BYTES = 64 << 20
#: Seconds of timed calls per case (at least :data:`MIN_CALLS` calls, the median kept), and
#: the time of one call past which the larger sizes of its op are not measured.
SAMPLE_S = 0.04
MIN_CALLS = 3
MAX_CALL_S = 1.0

#: The figures of a device's calibration, in the order reports show them.
LINK_NAMES = {
    "h2d_gbs": "host to device",
    "d2h_gbs": "device to host",
    "h2d_pinned_gbs": "host to device, pinned",
    "d2h_pinned_gbs": "device to host, pinned",
}


@dataclass(frozen=True)
class Point:
    """One measured case: ``op`` on ``shapes`` in ``dtype`` on ``device_type`` took ``seconds``
    per call (the median), its arguments on the device."""

    op: str
    dtype: str
    n: int
    shapes: tuple[tuple[int, ...], ...]
    device_type: str
    seconds: float

    def measurement(self) -> tuple[str, tuple[tuple[int, ...], ...], str, str, float]:
        """As :meth:`PerformanceModel.calibrate` takes it."""
        return (self.op, self.shapes, self.dtype, self.device_type, self.seconds)

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "dtype": self.dtype,
            "n": self.n,
            "shapes": [list(s) for s in self.shapes],
            "device": self.device_type,
            "seconds": self.seconds,
        }


@dataclass
class DeviceCalibration:
    """What the step measured on one device: with ``backend``, the launch latency and the link
    (``figures``, in the calibration's keys), each op's cases (``points``), and why anything
    was not measured (``skipped``)."""

    device_type: str
    name: str
    kind: str | None
    backend: str
    figures: dict[str, Any] = field(default_factory=dict)
    points: list[Point] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: The backend's version (``Availability.version``), where it says.
    version: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "device_type": self.device_type,
            "name": self.name,
            "kind": self.kind,
            "backend": self.backend,
            "version": self.version,
            "figures": dict(self.figures),
            "points": [p.as_dict() for p in self.points],
            "skipped": list(self.skipped),
            "seconds": self.seconds,
        }


@dataclass
class CalibrationReport:
    """The calibration step's outcome: per device what was measured, and ``calibration``, the
    model's calibration fitted to it (per device type: ``launch_us``, the link keys,
    ``efficiency`` and ``overhead_us`` per op and per ``op:dtype``, ``measured_at``,
    ``backend``), ready for the tuning cache."""

    devices: list[DeviceCalibration] = field(default_factory=list)
    calibration: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def points(self) -> list[Point]:
        return [p for d in self.devices for p in d.points]

    def as_dict(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "devices": [d.as_dict() for d in self.devices],
            "calibration": self.calibration,
            "problems": list(self.problems),
        }

    def lines(self) -> list[str]:
        """The figures in words, a line per device (what ``prism bench --calibrate`` prints)."""
        out = []
        for d in self.devices:
            entry = self.calibration.get(d.device_type, {})
            out.append(f"{d.device_type} ({d.name}; {d.backend}): {figures_text(entry)}")
            out.extend(f"  not measured: {why}" for why in d.skipped)
        return out


def figures_text(entry: dict[str, Any]) -> str:
    """A calibration entry in words: ``"launch 4.1 µs; link 10 GB/s in, 3.2 GB/s back (pinned
    24 and 25 GB/s); matmul efficiency 0.41 + 6 µs a call, ..."``."""
    parts = []
    if "launch_us" in entry:
        parts.append(f"launch {seconds_text(entry['launch_us'] * 1e-6)}")
    if "h2d_gbs" in entry or "d2h_gbs" in entry or "host_link_gbs" in entry:
        old = entry.get("host_link_gbs")
        into, back = entry.get("h2d_gbs", old), entry.get("d2h_gbs", old)
        text = f"link {_gbs(into)} GB/s in, {_gbs(back)} GB/s back"
        if "h2d_pinned_gbs" in entry or "d2h_pinned_gbs" in entry:
            pinned_in, pinned_back = entry.get("h2d_pinned_gbs"), entry.get("d2h_pinned_gbs")
            text += f" (pinned {_gbs(pinned_in)} and {_gbs(pinned_back)} GB/s)"
        parts.append(text)
    over = entry.get("overhead_us", {})
    for op, eff in sorted(entry.get("efficiency", {}).items()):
        if ":" in op:
            continue  # the per-dtype figures: in the JSON
        text = f"{op} efficiency {eff:.3g}"
        if over.get(op):
            text += f" + {seconds_text(over[op] * 1e-6)} a call"
        parts.append(text)
    return "; ".join(parts) or "nothing measured"


def _gbs(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


class _Skip(Exception):
    """A case that cannot be measured here; the message says why."""


def _timed(call: Callable[[], Any], sample_s: float, deadline: float | None) -> float:
    """Seconds per call of ``call`` (which waits for its device): one untimed call (plans,
    kernels compiled on first use), then the median of at least :data:`MIN_CALLS` timed ones,
    for about ``sample_s``."""
    call()
    times: list[float] = []
    began = time.perf_counter()
    while len(times) < MIN_CALLS or (time.perf_counter() - began < sample_s and len(times) < 200):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
        if times[-1] > MAX_CALL_S or (deadline is not None and time.perf_counter() > deadline):
            break
    return statistics.median(times)


def _drivers(desc: DeviceDescription) -> list[Backend]:
    """The available backends that drive ``desc`` other than the reference, most preferred
    first."""
    from prism_core.kernel.plugins import plugins

    found = []
    for backend in plugins().backends.values():
        if backend.name == "numpy":
            continue
        try:
            if backend.can_drive(desc) and backend.availability():
                found.append(backend)
        except Exception:  # a backend that cannot answer drives nothing here
            continue
    return sorted(found, key=lambda b: (-b.priority, b.name))


def _version(backend: Backend | None) -> str | None:
    if backend is None:
        import numpy as np

        return str(np.__version__)
    try:
        return backend.availability().version
    except Exception:  # availability never raises; a version is only a label
        return None


def _copy_into(host: Any, device_array: Any) -> bool:
    """Copy ``device_array`` into the pinned host array ``host`` (a NumPy array, as
    ``Backend.pinned_empty`` gives), where the array types say how (torch's ``Tensor.copy_``
    into a tensor over ``host``'s memory, CuPy's ``ndarray.get(out=)``); whether they did."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(device_array, torch.Tensor):
        target = host if isinstance(host, torch.Tensor) else torch.from_numpy(host)
        target.copy_(device_array)
        return True
    get = getattr(device_array, "get", None)
    if callable(get):
        try:
            get(out=host)
        except TypeError:
            return False
        return True
    return False


def _link(
    backend: Backend, desc: DeviceDescription, sample_s: float, deadline: float | None
) -> tuple[dict[str, float], list[str]]:
    """The host link's rate each way (GB/s), from pageable and from pinned host memory."""
    import numpy as np

    figures: dict[str, float] = {}
    skipped: list[str] = []
    count = LINK_BYTES // 4
    host = np.ones(count, dtype=np.float32)  # written: its pages exist before the copies
    on_device = backend.to_device(host, desc)
    backend.synchronize(on_device)

    def to_device(source: Any) -> Callable[[], Any]:
        def call() -> Any:
            out = backend.to_device(source, desc)
            backend.synchronize(out)
            return out

        return call

    def rate(call: Callable[[], Any]) -> float:
        return LINK_BYTES / _timed(call, sample_s, deadline) / 1e9

    figures["h2d_gbs"] = rate(to_device(host))
    figures["d2h_gbs"] = rate(lambda: backend.to_numpy(on_device))
    pinned = backend.pinned_empty((count,), "float32")
    if pinned is None:
        skipped.append(f"pinned copies: backend {backend.name!r} offers no pinned memory here")
        return figures, skipped
    pinned_h2d = to_device(pinned)
    pinned_h2d()
    figures["h2d_pinned_gbs"] = rate(pinned_h2d)
    if _copy_into(pinned, on_device):
        figures["d2h_pinned_gbs"] = rate(lambda: _copy_into(pinned, on_device))
    else:
        skipped.append(
            f"pinned copies back: {type(pinned).__name__} from {backend.name!r} cannot be "
            "copied into here"
        )
    return figures, skipped


def _measure_device(
    desc: DeviceDescription,
    name: str,
    backend: Backend | None,
    ops: Sequence[str],
    dtypes: Sequence[str],
    sample_s: float,
    deadline: float | None,
    step: Callable[[str], None],
) -> DeviceCalibration:
    from prism_core._tuning.tuner import example_arguments
    from prism_core.kernel.dispatch.ops import get_op
    from prism_core.kernel.dispatch.scope import device, use_backend

    began = time.perf_counter()
    accelerator = backend is not None
    where = DeviceCalibration(
        desc.device_type, name, desc.kind, backend.name if backend is not None else "numpy"
    )
    where.version = _version(backend)
    sizes = SIZES["accelerator" if accelerator else "cpu"]

    def place(args: tuple[Any, ...]) -> tuple[Any, ...]:
        if backend is None:
            return args
        moved = tuple(backend.to_device(a, desc) for a in args)
        backend.synchronize(*moved)
        return moved

    on = device(desc)
    only = use_backend(backend.name) if backend is not None else None

    def runner(op: str, args: tuple[Any, ...]) -> Callable[[], Any]:
        fn = get_op(op).function
        if only is None or backend is None:  # the CPU: NumPy's arrays, nothing to wait for

            def on_cpu() -> Any:
                with on:
                    return fn(*args)

            return on_cpu

        def call() -> Any:
            with on, only:
                out = fn(*args)
            backend.synchronize(out)
            return out

        return call

    def run(op: str, args: tuple[Any, ...]) -> float:
        try:
            return _timed(runner(op, place(args)), sample_s, deadline)
        except (PrismError, TypeError, ValueError, RuntimeError, MemoryError) as exc:
            raise _Skip(describe_exception(exc)) from None

    step(f"launch latency on {desc.device_type}")
    for op in ("add", "matmul"):  # a device without add may have matmul (1 x 1)
        one = example_arguments(op, 1, "float32")
        try:
            where.figures["launch_us"] = run(op, one) * 1e6
            break
        except _Skip as why:
            if op == "matmul":
                where.skipped.append(f"launch latency: {why}")
    if backend is not None:
        step(f"host link of {desc.device_type} ({backend.name})")
        try:
            link, why_not = _link(backend, desc, sample_s, deadline)
            where.figures.update(link)
            where.skipped.extend(why_not)
        except Exception as exc:  # a copy that fails is reported, the ops still measured
            where.skipped.append(f"host link: {describe_exception(exc)}")
    for op, dtype in ((op, dtype) for op in ops for dtype in dtypes):
        for n in sizes[op]:
            if deadline is not None and time.perf_counter() > deadline:
                where.skipped.append(f"{op} {dtype} from n={n} on: out of time (--budget)")
                break
            step(f"{op} {dtype} n={n} on {desc.device_type}")
            try:
                args = example_arguments(op, n, dtype)
                seconds = run(op, args)
            except _Skip as why:
                where.skipped.append(f"{op} {dtype} n={n}: {why}")
                break
            except PrismError as exc:  # too large for this host's memory
                where.skipped.append(f"{op} {dtype} n={n}: {exc}")
                break
            shapes = tuple(tuple(int(d) for d in a.shape) for a in args)
            where.points.append(Point(op, dtype, n, shapes, desc.device_type, seconds))
            if seconds > MAX_CALL_S:
                where.skipped.append(
                    f"{op} {dtype} above n={n}: one call took {seconds_text(seconds)}"
                )
                break
    where.seconds = time.perf_counter() - began
    return where


def steps(ops: Sequence[str], dtypes: Sequence[str], accelerators: int) -> int:
    """How many progress steps :func:`calibrate_host` takes (for a progress total)."""
    per_device = 1 + sum(len(SIZES["cpu"][op]) for op in ops) * len(dtypes)
    return (1 + accelerators) * per_device + accelerators


def devices_to_calibrate() -> list[tuple[DeviceDescription, str, Backend | None]]:
    """The host CPU (measured through NumPy's arrays), then each other present device with the
    most preferred available backend that drives it; a device no backend drives is left
    out."""
    from prism_core.kernel.host import present_devices

    out: list[tuple[DeviceDescription, str, Backend | None]] = []
    seen: set[str] = set()
    for inst in present_devices().devices:
        desc = inst.description
        if desc.device_type in seen:  # one calibration per device type: the first of them
            continue
        if desc.kind == "cpu":
            if not any(d.kind == "cpu" for d, _, _ in out):
                out.insert(0, (desc, inst.name or desc.device_type, None))
                seen.add(desc.device_type)
            continue
        drivers = _drivers(desc)
        if drivers:
            out.append((desc, inst.name or desc.device_type, drivers[0]))
            seen.add(desc.device_type)
    return out


def calibrate_host(
    *,
    ops: Sequence[str] | None = None,
    dtypes: Sequence[str] = DTYPES,
    progress: Callable[[str], None] | None = None,
    deadline: float | None = None,
    sample_s: float = SAMPLE_S,
    base: dict[str, Any] | None = None,
) -> CalibrationReport:
    """Measure this host's devices (see the module docstring) and fit the model to them.

    ``ops``: the op families to measure (default :data:`OPS`); ``dtypes``: their dtypes.
    ``progress(label)`` is called before each step.  ``deadline`` (a ``time.perf_counter()``
    value) stops measuring; what was measured by then is kept.  ``base``: a calibration to fit
    on top of (this host's stored one): its figures for devices not measured now are kept.
    """
    from prism_core._tuning.model import ModelError, PerformanceModel

    chosen = list(OPS if ops is None else [o for o in ops if o in OPS])
    for d in dtypes:
        if d not in DTYPES:
            raise ValueError(f"calibrate_host(): dtypes: {d!r} is not one of {', '.join(DTYPES)}")
    began = time.perf_counter()
    report = CalibrationReport()
    say = progress or (lambda label: None)
    for desc, name, backend in devices_to_calibrate():
        report.devices.append(
            _measure_device(desc, name, backend, chosen, dtypes, sample_s, deadline, say)
        )
    now = time.time()
    calibration: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (base or {}).items()}
    for where in report.devices:
        # Over what was stored: the figures measured now replace theirs, the others stay (the
        # efficiencies of ops measured only by the bench's tuning, such as linalg.svd).
        before = calibration.get(where.device_type, {})
        calibration[where.device_type] = {
            **before,
            **where.figures,
            "measured_at": now,
            "backend": where.backend + (f" {where.version}" if where.version else ""),
        }
    try:
        model = PerformanceModel(calibration)
        measurements = [p.measurement() for p in report.points]
        if measurements:
            # Per op (any dtype), then per op and dtype, which takes precedence where it fits.
            model = model.calibrate(measurements).calibrate(measurements, per_dtype=True)
        report.calibration = model.calibration
    except (ModelError, TypeError, ValueError) as exc:
        report.problems.append(f"the performance model could not be calibrated: {exc}")
        report.calibration = calibration
    report.seconds = time.perf_counter() - began
    return report
