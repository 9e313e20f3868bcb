"""Data movement between backends: moving a call's arrays to the backend that runs it, bringing
the result back, and saying what that costs.

The rule (docs/backends.md, "Where a call runs"): data stays where it is unless the caller asks
otherwise.  When a call must run elsewhere (a named backend or device; a fallback) the
dispatcher moves its arrays with the functions made here, once per plan:

* to the reference backend (NumPy), an array is copied out by the backend that owns it
  (:meth:`Backend.to_numpy`: a CUDA tensor comes to host memory);
* to any other backend, through :meth:`Backend.to_device` on the device the variant runs on
  (DLPack: zero copy where both sides are in the same memory).

In automatic mode the result goes back to the arguments' backend (:func:`bring_back`): NumPy
in, NumPy out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prism_core._description.device import DeviceDescription
    from prism_core._knowledge.backend import Backend

__all__ = ["bring_back", "describe", "each", "mover", "nbytes"]

#: DLPack device types whose memory the host CPU reads directly (kDLCPU, kDLCUDAHost,
#: kDLROCMHost, kDLCUDAManaged).
_HOST_MEMORY = frozenset({1, 3, 11, 13})


def mover(
    backend: Backend,
    device: DeviceDescription | None,
    owner: Callable[[Any], Backend | None],
    *,
    reference: Backend | None,
) -> Callable[[Any], Any]:
    """A function moving one argument to ``backend`` on ``device`` (native values pass)."""
    if backend is reference:

        def to_host(value: Any) -> Any:
            if backend.is_native(value):
                return value
            source = owner(value)
            if source is not None and source is not backend:
                return source.to_numpy(value)
            return backend.to_device(value, device)

        return to_host

    def move(value: Any) -> Any:
        if backend.is_native(value):
            return value
        return backend.to_device(value, device)

    return move


def each(move: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``move`` applied to every item of a sequence argument (``stack([a, b])``)."""

    def move_items(values: Any) -> Any:
        return type(values)(move(v) for v in values)

    return move_items


def bring_back(runner: Backend, home: Backend, reference: Backend | None) -> Callable[[Any], Any]:
    """A function taking a result of ``runner`` to ``home``'s arrays, item by item in tuples
    (named tuples keep their type).  To the reference backend, 0-d results become NumPy
    scalars, as NumPy's reductions give them."""
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
            return out[()] if getattr(out, "ndim", 1) == 0 else out
        return home.from_dlpack(result)

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
    memory both sides read is shared through DLPack where it allows."""
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
    if _in_host_memory(value) and not on_gpu:
        how = "host memory on both sides: shared through DLPack where it allows, else copied"
    elif _in_host_memory(value) and on_gpu:
        assert device is not None
        link = device.data.get("host_link") or {}
        bandwidth = link.get("bandwidth_gbps")
        if bandwidth and size is not None:
            seconds = size / (bandwidth / 2 * 1e9)
            how = (
                f"copied over the host link ({link.get('interface', 'host link')}, "
                f"{bandwidth / 2:g} GB/s each way): ~{_time_text(seconds)}"
            )
        else:
            how = "copied over the host link (its bandwidth is not described: cost unknown)"
    elif not on_gpu:
        how = "copied from device memory to host memory (the source's link is not known here)"
    else:
        how = "device memory on both sides: shared through DLPack where the devices allow"
    return f"argument {position}: {what}{came} -> {where}: {how}"
