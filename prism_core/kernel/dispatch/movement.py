"""Data movement between backends: moving a call's arrays to the backend that runs it, bringing
the result back, and saying what that costs.

When a call must run elsewhere (a named backend or device; a fallback), the dispatcher moves its
arrays with the movers made here, once per plan: to NumPy through the owning backend's
``to_numpy``, to any other backend through ``to_device`` (DLPack); in automatic mode
:func:`bring_back` returns the result to the arguments' backend.  :func:`recording` collects a
:class:`MoveRecord` per move, for one context-variable read per moved argument.  The rule:
docs/backends.md, "Where a call runs"; the records: docs/pipelines.md, "Data between stages".

A feature that moves arrays itself (a placed function, ``prism_core.function``) uses the public
helpers: :func:`what` and :func:`address` to describe an array and tell a zero copy, and
:func:`record_move` to put its own move on the active :func:`recording`.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.description.device import DeviceDescription

__all__ = [
    "COPIED",
    "UNVERIFIED",
    "ZERO_COPY",
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


@home("prism_core.pipelines")
@dataclass(frozen=True)
class MoveRecord:
    """One array that dispatch moved while a :func:`recording` was active.

    ``position`` is the argument's position in the op call, or ``None`` for a result brought
    back to the arguments' backend.  ``source`` is the backend that owned the array (``None``:
    no loaded backend owns it), ``backend`` and ``device`` where it went.  ``how`` is
    :data:`ZERO_COPY` when the moved array shares the original's memory (their data addresses
    are equal), :data:`COPIED` when it does not (or when it crossed between host and device
    memory), :data:`UNVERIFIED` when neither array says where its data is.  ``seconds`` is the
    estimated cost: ``0.0`` for a zero copy, the size over the device's host link for a copy
    between host and a described GPU, ``None`` when not known.
    """

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

    def as_dict(self) -> dict[str, Any]:
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
    argument and each result brought back appends a :class:`MoveRecord` to.

    The innermost recording gets the records (a pipeline's stage records its own moves, the
    pipeline those made between stages).  Threads and tasks started in a copy of this context
    (``contextvars.copy_context()``, ``asyncio.create_task``) append to the same list.
    """
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
    owner: Callable[[Any], Backend | None],
    *,
    reference: Backend | None,
    op: str = "",
    position: int = 0,
) -> Callable[[Any], Any]:
    """A function moving one argument (argument ``position`` of ``op``, for the record) to
    ``backend`` on ``device`` (native values pass).  To the reference backend, an array goes
    through its owner's ``to_numpy``."""
    to_host = backend is reference

    def move(value: Any) -> Any:
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


def is_masked(value: Any) -> bool:
    """Whether ``value`` is a NumPy masked array (without importing NumPy)."""
    return type(value).__module__.startswith("numpy.ma") and hasattr(value, "mask")


def _record(
    op: str,
    position: int | None,
    before: Any,
    after: Any,
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
    else:
        # Between host memory and a GPU's there is no zero copy (a simulated GPU's arrays are
        # recorded as a real one's would be); elsewhere the arrays do not tell.
        how = COPIED if on_device else UNVERIFIED
    seconds: float | None = None
    if how == ZERO_COPY:
        seconds = 0.0
    elif how == COPIED and on_device and size is not None:
        assert link is not None
        one_way = link.host_bandwidth_per_direction()
        if one_way:
            seconds = size / (one_way * 1e9)
    return MoveRecord(
        op,
        position,
        kind,
        shape,
        dtype,
        size,
        source.name if source is not None else None,
        backend.name,
        device.device_type if device is not None else None,
        how,
        seconds,
    )


def record_move(
    op: str,
    position: int | None,
    before: Any,
    after: Any,
    source: Backend | None,
    backend: Backend,
    device: DeviceDescription | None = None,
) -> None:
    """Record that ``before`` (argument ``position`` of ``op``; ``None``: a result) was moved
    to ``after`` on ``backend`` (on ``device``), by a feature that moved it itself rather than
    through :func:`mover` or :func:`bring_back`: the active :func:`recording`, if any, gets a
    :class:`MoveRecord` (zero copy or copied, from the arrays' addresses).  Nothing is done
    when nothing records."""
    sink = _RECORDING.get()
    if sink is not None:
        sink.append(_record(op, position, before, after, source, backend, device, device))


def address(value: Any) -> int | None:
    """Where an array's data starts, when it says (torch's ``data_ptr()``, CUDA's array
    interface, NumPy's); ``None`` otherwise.  Two arrays with the same address share their
    memory (a zero-copy move).  Asked in that order: asking a tensor for an array
    interface it lacks costs an exception."""
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
_DTYPE_NAMES: dict[Any, str] = {}


def what(value: Any) -> tuple[str, tuple[int, ...] | None, str | None]:
    """``(kind, shape, dtype)``: the array's type name (``"numpy.ndarray"``), shape and dtype
    name, as a :class:`MoveRecord` keeps them; shape and dtype are ``None`` for a value that
    does not say them (a scalar, a symbolic shape)."""
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


def each(move: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``move`` applied to every item of a sequence argument (``stack([a, b])``)."""

    def move_items(values: Any) -> Any:
        return type(values)(move(v) for v in values)

    return move_items


def bring_back(
    runner: Backend,
    home: Backend,
    reference: Backend | None,
    *,
    op: str = "",
    device: DeviceDescription | None = None,
) -> Callable[[Any], Any]:
    """A function taking a result of ``runner`` (on ``device``, for the record) to ``home``'s
    arrays, item by item in tuples (named tuples keep their type).  To the reference backend,
    0-d results become NumPy scalars, as NumPy's reductions give them."""
    to_host = home is reference

    def back(result: Any) -> Any:
        if isinstance(result, tuple):
            items = [back(r) for r in result]
            if hasattr(result, "_fields"):
                return type(result)(*items)
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


def nbytes(value: Any) -> int | None:
    """The size of an array in bytes (any framework), or ``None`` when it cannot be told."""
    size = getattr(value, "nbytes", None)
    if isinstance(size, int):
        return size
    shape = getattr(value, "shape", None)
    itemsize = getattr(getattr(value, "dtype", None), "itemsize", None)
    if shape is None or not isinstance(itemsize, int):
        return None
    return math.prod(int(s) for s in shape) * itemsize


def _in_host_memory(value: Any) -> bool:
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
    value: Any,
    source: Backend | None,
    backend: Backend,
    device: DeviceDescription | None,
) -> str:
    """One sentence on moving ``value`` (argument ``position``) to ``backend`` on ``device``,
    with its estimated cost: a copy over the device's host link costs its size over the link's
    one-way bandwidth (half the ``bandwidth_gbps`` the description gives for both directions);
    memory both sides read is shared through DLPack where it allows and the backend takes
    arrays so (``Backend.transfer``), else copied."""
    kind = (
        "described array"  # an ArraySpec: shape and dtype only, standing for a NumPy array
        if type(value).__name__ == "ArraySpec"
        else f"{type(value).__module__}.{type(value).__name__}"
    )
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
    if _in_host_memory(value) and not on_gpu:
        how = (
            "host memory on both sides: shared through DLPack where it allows, else copied"
            if shares
            else f"host memory on both sides: copied ({backend.name} takes arrays by copy)"
        )
    elif _in_host_memory(value) and on_gpu:
        assert device is not None
        one_way = device.host_bandwidth_per_direction()
        hosts = [link for link in device.links if link.kind == "host"]
        if one_way and size is not None:
            seconds = size / (one_way * 1e9)
            names = ", ".join(
                f"{link.count} x {link.interface}" if link.count > 1 else link.interface
                for link in hosts
            )
            how = (
                f"copied over the host link ({names or 'host link'}, {one_way:g} GB/s each "
                f"way): ~{_time_text(seconds)}"
            )
        else:
            how = "copied over the host link (its bandwidth is not described: cost unknown)"
    elif not on_gpu:
        how = "copied from device memory to host memory (the source's link is not known here)"
    elif shares:
        how = "device memory on both sides: shared through DLPack where the devices allow"
    else:
        how = f"device memory on both sides: copied ({backend.name} takes arrays by copy)"
    return f"argument {position}: {what}{came} -> {where}: {how}"
