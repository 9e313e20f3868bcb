"""Data movement between backends: moving a call's arrays to the backend that runs it (to
NumPy through the owner's ``to_numpy``, elsewhere through ``to_device``), bringing the result
back (:func:`bring_back`), and saying what that costs; :func:`recording` collects a
:class:`MoveRecord` per move, and a feature that moves arrays itself records them with
:func:`record_move`.  docs/backends.md, "Where a call runs"; docs/pipelines.md, "Data between
stages"."""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.description.device import DeviceDescription

__all__ = [
    "COPIED",
    "UNVERIFIED",
    "ZERO_COPY",
    "Move",
    "MoveRecord",
    "address",
    "bring_back",
    "describe",
    "each",
    "is_masked",
    "mover",
    "nbytes",
    "record_move",
    "recording",
    "what",
]

#: How a recorded move went (:attr:`MoveRecord.how`).
ZERO_COPY = "DLPack (zero copy)"
COPIED = "copied"
UNVERIFIED = "moved (whether it was copied cannot be told from the arrays)"

#: Moves one argument (or brings back one result): a mover, :func:`each`, :func:`bring_back`.
Move = Callable[[object], object]


@home("prism_core.pipelines")
@dataclass(frozen=True)
class MoveRecord:
    """One array that dispatch moved while a :func:`recording` was active: argument
    ``position`` of the op call (``None``: a result brought back), from ``source`` (the backend
    that owned it, if any) to ``backend`` on ``device``.  ``how`` is :data:`ZERO_COPY` (the
    arrays' data addresses are equal), :data:`COPIED` (they differ, or it crossed between host
    and device memory) or :data:`UNVERIFIED` (neither says); ``seconds`` the estimated cost:
    ``0.0`` for a zero copy, the size over a described GPU's host link, else ``None``."""

    op: str
    position: int | None
    #: The array's type (``"numpy.ndarray"``), shape and dtype name, when it has them.
    kind: str
    shape: tuple[int, ...] | None
    dtype: str | None
    nbytes: int | None
    source: str | None
    backend: str
    device: str | None
    how: str
    seconds: float | None = None

    @property
    def what(self) -> str:
        """``"numpy.ndarray float64[512x512]"``."""
        if self.shape is None or self.dtype is None:
            return self.kind
        return f"{self.kind} {self.dtype}[{'x'.join(map(str, self.shape))}]"

    @property
    def argument(self) -> str:
        """``"argument 0"`` or ``"result"``."""
        return "result" if self.position is None else f"argument {self.position}"

    def as_dict(self) -> dict[str, object]:
        return {
            "op": self.op,
            "argument": self.argument,
            "position": self.position,
            "what": self.what,
            "shape": None if self.shape is None else list(self.shape),
            "dtype": self.dtype,
            "nbytes": self.nbytes,
            "source": self.source,
            "backend": self.backend,
            "device": self.device,
            "how": self.how,
            "seconds": self.seconds,
        }

    def describe(self) -> str:
        """One line: ``matmul argument 0: numpy.ndarray float64[512x512] (2.1 MB) numpy ->
        torch on generic.x86-64-v4: DLPack (zero copy)``."""
        size = "" if self.nbytes is None else f" ({_size_text(self.nbytes)})"
        came = f" {self.source}" if self.source else ""
        where = self.backend + (f" on {self.device}" if self.device else "")
        cost = "" if not self.seconds else f", ~{_time_text(self.seconds)}"
        return f"{self.op} {self.argument}: {self.what}{size}{came} -> {where}: {self.how}{cost}"


#: The list the active :func:`recording` appends to; ``None``: nothing records.
_RECORDING: contextvars.ContextVar[list[MoveRecord] | None] = contextvars.ContextVar(
    "prism_move_recording", default=None
)


@contextlib.contextmanager
def recording() -> Iterator[list[MoveRecord]]:
    """Record the moves dispatch makes in this context: yields the list that each moved
    argument and each result brought back appends a :class:`MoveRecord` to.  The innermost
    recording gets them; threads and tasks started in a copy of this context append too."""
    sink: list[MoveRecord] = []
    token = _RECORDING.set(sink)
    try:
        yield sink
    finally:
        with contextlib.suppress(ValueError):  # ended in another context: not ours to reset
            _RECORDING.reset(token)


#: DLPack device types whose memory the host CPU reads directly (kDLCPU, kDLCUDAHost,
#: kDLROCMHost, kDLCUDAManaged).
_HOST_MEMORY = frozenset({1, 3, 11, 13})


def mover(
    backend: Backend,
    device: DeviceDescription | None,
    owner: Callable[[object], Backend | None],
    *,
    reference: Backend | None,
    op: str = "",
    position: int = 0,
) -> Move:
    """A function moving argument ``position`` of ``op`` to ``backend`` on ``device`` (native
    values pass); to the reference backend, through its owner's ``to_numpy``."""
    to_host = backend is reference

    def move(value: object) -> object:
        if backend.is_native(value):
            return value
        source = owner(value)
        if to_host and source is not None and source is not backend:
            out = source.to_numpy(value)
        else:
            out = backend.to_device(value, device)
        sink = _RECORDING.get()
        if sink is not None:
            on = None if to_host else device
            sink.append(_record(op, position, value, out, source, backend, on, on))
        return out

    return move


def is_masked(value: object) -> bool:
    """Whether ``value`` is a NumPy masked array (without importing NumPy)."""
    return type(value).__module__.startswith("numpy.ma") and hasattr(value, "mask")


def _record(
    op: str,
    position: int | None,
    before: object,
    after: object,
    source: Backend | None,
    backend: Backend,
    device: DeviceDescription | None,
    link: DeviceDescription | None,
) -> MoveRecord:
    """The record of moving ``before`` (to ``after``); ``link`` is the non-host device whose
    host link a copy crossed, if any."""
    size = nbytes(before)
    kind, shape, dtype = what(before)
    a, b = address(before), address(after)
    on_device = link is not None and link.kind not in (None, "cpu")
    if a is not None and b is not None:
        how = ZERO_COPY if a == b else COPIED
    else:  # no zero copy between host memory and a GPU's (simulated or not)
        how = COPIED if on_device else UNVERIFIED
    seconds: float | None = None
    if how == ZERO_COPY:
        seconds = 0.0
    elif how == COPIED and on_device and size is not None:
        assert link is not None
        one_way = link.host_bandwidth_per_direction()
        if one_way:
            seconds = size / (one_way * 1e9)
    came = source.name if source is not None else None
    where = device.device_type if device is not None else None
    return MoveRecord(
        op, position, kind, shape, dtype, size, came, backend.name, where, how, seconds
    )


def record_move(
    op: str,
    position: int | None,
    before: object,
    after: object,
    source: Backend | None,
    backend: Backend,
    device: DeviceDescription | None = None,
) -> None:
    """Record that ``before`` (argument ``position`` of ``op``; ``None``: a result) was moved
    to ``after`` on ``backend`` (on ``device``) by a feature that moved it itself: the active
    :func:`recording`, if any, gets a :class:`MoveRecord`."""
    sink = _RECORDING.get()
    if sink is not None:
        sink.append(_record(op, position, before, after, source, backend, device, device))


def address(value: object) -> int | None:
    """Where an array's data starts, when it says (torch's ``data_ptr()``, then CUDA's or
    NumPy's array interface); ``None`` otherwise.  Arrays with the same address share memory."""
    data_ptr = getattr(value, "data_ptr", None)
    if callable(data_ptr):
        try:
            address = data_ptr()
        except Exception:  # a tensor without storage (meta, sparse): not known
            return None
        return address if isinstance(address, int) else None
    for attr in ("__cuda_array_interface__", "__array_interface__"):
        interface = getattr(value, attr, None)
        if isinstance(interface, dict):
            data = interface.get("data")
            if isinstance(data, tuple) and data and isinstance(data[0], int):
                return data[0]
    return None


#: Names of array types and dtypes, made once each (a record is made per moved argument).
_TYPE_NAMES: dict[type, str] = {}
_DTYPE_NAMES: dict[object, str] = {}


def what(value: object) -> tuple[str, tuple[int, ...] | None, str | None]:
    """``(kind, shape, dtype)`` as a :class:`MoveRecord` keeps them: ``"numpy.ndarray"``, the
    shape and the dtype's name (``None`` where the value does not say them)."""
    cls = type(value)
    kind = _TYPE_NAMES.get(cls)
    if kind is None:
        kind = _TYPE_NAMES[cls] = f"{cls.__module__}.{cls.__name__}"
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if dtype is None or shape is None:
        return kind, None, None
    try:
        dims = tuple(int(s) for s in shape)
        name = _DTYPE_NAMES.get(dtype)
    except (TypeError, ValueError):  # an unhashable dtype, a symbolic shape
        return kind, None, None
    if name is None:
        name = getattr(dtype, "name", None) or str(dtype).removeprefix("torch.")
        _DTYPE_NAMES[dtype] = name
    return kind, dims, name


def each(move: Move) -> Move:
    """``move`` applied to every item of a sequence argument (``stack([a, b])``)."""

    def move_items(values: object) -> object:
        assert isinstance(values, (list, tuple))  # ``arguments.is_sequence``
        return type(values)(move(v) for v in values)

    return move_items


def bring_back(
    runner: Backend,
    home: Backend,
    reference: Backend | None,
    *,
    op: str = "",
    device: DeviceDescription | None = None,
) -> Move:
    """A function taking a result of ``runner`` (on ``device``, for the record) to ``home``'s
    arrays, item by item in tuples and lists.  To the reference backend, 0-d results become
    NumPy scalars, as NumPy's reductions give them."""
    to_host = home is reference

    def back(result: object) -> object:
        if isinstance(result, tuple):
            items = [back(r) for r in result]
            if hasattr(result, "_fields"):  # a named tuple's type takes the items one by one
                named: Callable[..., object] = type(result)
                return named(*items)
            return tuple(items)
        if isinstance(result, list):
            return [back(r) for r in result]
        if not runner.owns(result):
            return result
        if to_host:
            out = runner.to_numpy(result)
            out = out[()] if getattr(out, "ndim", 1) == 0 else out
        else:
            out = home.from_dlpack(result)
        sink = _RECORDING.get()
        if sink is not None:
            sink.append(_record(op, None, result, out, runner, home, None, device))
        return out

    return back


def nbytes(value: object) -> int | None:
    """The size of an array in bytes (any framework), or ``None`` when it cannot be told."""
    size = getattr(value, "nbytes", None)
    if isinstance(size, int):
        return size
    shape = getattr(value, "shape", None)
    itemsize = getattr(getattr(value, "dtype", None), "itemsize", None)
    if shape is None or not isinstance(itemsize, int):
        return None
    return math.prod(int(s) for s in shape) * itemsize


def _in_host_memory(value: object) -> bool:
    where = getattr(value, "__dlpack_device__", None)
    if where is None:
        return True
    try:
        return int(where()[0]) in _HOST_MEMORY
    except Exception:  # a broken __dlpack_device__: say host, the common case
        return True


def _size_text(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _time_text(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def describe(
    position: int,
    value: object,
    source: Backend | None,
    backend: Backend,
    device: DeviceDescription | None,
) -> str:
    """One sentence on moving ``value`` (argument ``position``) to ``backend`` on ``device``,
    with its estimated cost: a copy over the host link costs its size over the link's one-way
    bandwidth; memory both sides read is shared through DLPack where the backend takes arrays
    so (``Backend.transfer``), else copied."""
    cls = type(value)  # an ArraySpec, shape and dtype only, stands for a NumPy array
    kind = "described array" if cls.__name__ == "ArraySpec" else f"{cls.__module__}.{cls.__name__}"
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    what = kind
    if dtype is not None and shape is not None:
        what += f" {getattr(dtype, 'name', dtype)}[{'x'.join(str(int(s)) for s in shape)}]"
    size = nbytes(value)
    if size is not None:
        what += f" ({_size_text(size)})"
    came = f" from {source.name}" if source is not None else ""
    where = backend.name + (f" on {device.device_type}" if device is not None else "")
    on_gpu = device is not None and device.kind not in (None, "cpu")
    shares = backend.transfer == "dlpack"
    copied = f"copied ({backend.name} takes arrays by copy)"
    host = _in_host_memory(value)
    if host and not on_gpu:
        shared = "shared through DLPack where it allows, else copied"
        how = f"host memory on both sides: {shared if shares else copied}"
    elif host:
        assert device is not None
        one_way = device.host_bandwidth_per_direction()
        how = "copied over the host link (its bandwidth is not described: cost unknown)"
        if one_way and size is not None:
            names = ", ".join(
                f"{link.count} x {link.interface}" if link.count > 1 else link.interface
                for link in device.links
                if link.kind == "host"
            )
            how = (
                f"copied over the host link ({names or 'host link'}, {one_way:g} GB/s each "
                f"way): ~{_time_text(size / (one_way * 1e9))}"
            )
    elif not on_gpu:
        how = "copied from device memory to host memory (the source's link is not known here)"
    else:
        shared = "shared through DLPack where the devices allow"
        how = f"device memory on both sides: {shared if shares else copied}"
    return f"argument {position}: {what}{came} -> {where}: {how}"
