"""Pinned host buffers: a GPU part's host arrays staged through page-locked memory.

:class:`PinnedPool` keeps the page-locked buffers a GPU backend offers
(``Backend.pinned_empty``); a part's NumPy arrays are copied into them (:func:`stage`) where
the model's pinned host bandwidth makes that pay (:func:`staging_pays`), and the buffers go
back to the pool when the part's result is home (:func:`unstage`).  docs/split.md ("Pinned
host buffers").
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from prism_core.kernel.errors import debug

if TYPE_CHECKING:
    from prism_core._tuning.figures import Figures
    from prism_core.kernel.contract.backend import Backend

#: The name of the :class:`~prism_core.tuning.Figures` field with the host-to-device bandwidth
#: from page-locked memory (GB/s, one way), and of the one back into pageable memory.  Read with
#: ``getattr``: a model without the field, or whose figure was not calibrated on this host (a
#: description gives one figure for every kind of host memory), never stages through pinned
#: memory.
PINNED_FIELD = "host_link_pinned_gbps"
D2H_FIELD = "host_link_d2h_gbps"

#: The fixed cost of staging one part through pinned memory (a pool lookup and one copy call
#: per array); the page-locking of a new buffer costs more, once, and the buffer is kept
#: (:class:`PinnedPool`).  Below the size where the faster link saves this, a part is not
#: staged.
PINNED_FIXED_S = 20e-6


def offers_pinned(backend: Backend) -> bool:
    """Whether ``backend`` implements ``pinned_empty`` (the contract's default returns
    ``None``); asked without allocating anything."""
    from prism_core.kernel.contract.backend import Backend as Contract

    method = getattr(type(backend), "pinned_empty", None)
    return method is not None and method is not Contract.pinned_empty


def pinned_gbps(figures: Figures | None) -> float | None:
    """The host-to-device bandwidth from pinned memory (GB/s, one way) that ``figures`` give
    from a calibration on this host (``prism bench --calibrate``); ``None`` when there is none,
    or only the description's figure, which is the pageable one (staging on a guess could
    lose)."""
    if figures is None:
        return None
    value = getattr(figures, PINNED_FIELD, None)
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        return None
    if figures.sources.get(PINNED_FIELD) != "calibrated":
        return None
    return float(value)


def staged_transfer_s(
    target: Figures | None, host: Figures | None, in_bytes: float, moved_bytes: float
) -> float | None:
    """The modelled transfer when a part's arguments (``in_bytes``) are copied into pinned
    memory on the host (read and written at the host's bandwidth) and sent from there at the
    pinned bandwidth, and its result (the rest of ``moved_bytes``) comes back over the pageable
    link; ``None`` when a figure is missing."""
    pinned = pinned_gbps(target)
    if (
        pinned is None
        or target is None
        or not target.host_link_gbps
        or host is None
        or not host.bandwidth_gbps
    ):
        return None
    out_bytes = max(moved_bytes - in_bytes, 0.0)
    back = getattr(target, D2H_FIELD, None) or target.host_link_gbps
    return (
        2 * in_bytes / (host.bandwidth_gbps * 1e9)
        + in_bytes / (pinned * 1e9)
        + out_bytes / (back * 1e9)
    )


def staging_pays(
    backend: Backend, target: Figures | None, host: Figures | None, in_bytes: float
) -> bool:
    """Whether staging ``in_bytes`` of a part's host arrays through ``backend``'s pinned
    memory is predicted faster than sending them from pageable memory: the backend offers
    pinned memory, the model has a pinned bandwidth (not assumed) for the target, and the
    time saved exceeds :data:`PINNED_FIXED_S`."""
    if not offers_pinned(backend) or target is None or not target.host_link_gbps:
        return False
    staged = staged_transfer_s(target, host, in_bytes, in_bytes)
    if staged is None:
        return False
    return staged + PINNED_FIXED_S < in_bytes / (target.host_link_gbps * 1e9)


class PinnedPool:
    """Page-locked host buffers kept for the next part of the same shape and type: pinning
    memory costs far more than copying into it, so a buffer is made once per backend, shape
    and dtype and reused.  At most :attr:`per_key` buffers per key and :attr:`keys` keys are
    kept (the least recently used key goes first, and with it its memory's pinning): page-locked
    memory is taken from what the system can swap."""

    def __init__(self, per_key: int = 2, keys: int = 16) -> None:
        self.per_key = per_key
        self.keys = keys
        self._lock = threading.Lock()
        self._free: OrderedDict[tuple[str, tuple[int, ...], str], list[Any]] = OrderedDict()

    def take(self, backend: Backend, shape: tuple[int, ...], dtype: Any) -> Any | None:
        """A pinned buffer of ``shape`` and ``dtype`` (kept, or new from the backend), or
        ``None`` when the backend gives none."""
        key = (backend.name, shape, str(dtype))
        with self._lock:
            kept = self._free.get(key)
            if kept:
                self._free.move_to_end(key)
                return kept.pop()
        try:
            return backend.pinned_empty(shape, dtype)
        except Exception as exc:  # a backend that cannot pin now: the part runs unstaged
            debug("pinned_empty of %s failed: %s", backend.name, exc)
            return None

    def give(self, backend: Backend, buffer: Any) -> None:
        """Keep ``buffer`` (which no result may share memory with) for the next part."""
        key = (backend.name, tuple(int(d) for d in buffer.shape), str(buffer.dtype))
        with self._lock:
            kept = self._free.setdefault(key, [])
            self._free.move_to_end(key)
            if len(kept) < self.per_key:
                kept.append(buffer)
            while len(self._free) > self.keys:
                self._free.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._free.clear()


PINNED = PinnedPool()


def host_bytes(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """The bytes of the NumPy arrays among ``args`` and ``kwargs``: what :func:`stage` copies."""
    import numpy as np

    return sum(int(v.nbytes) for v in (*args, *kwargs.values()) if type(v) is np.ndarray and v.ndim)


def stage(
    backend: Backend, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any], list[Any]]:
    """``args`` and ``kwargs`` with each NumPy array among them copied into a pinned buffer of
    ``backend`` (those it gives none for stay as they are), and the buffers used."""
    import numpy as np

    used: list[Any] = []

    def pinned(value: Any) -> Any:
        if type(value) is not np.ndarray or value.ndim == 0 or value.size == 0:
            return value
        buffer = PINNED.take(backend, tuple(int(d) for d in value.shape), value.dtype)
        if buffer is None:
            return value
        np.copyto(buffer, value)
        used.append(buffer)
        return buffer

    return (
        tuple(pinned(a) for a in args),
        {k: pinned(v) for k, v in kwargs.items()},
        used,
    )


def unstage(backend: Backend, buffers: Sequence[Any], result: Any) -> None:
    """Give ``buffers`` back to the pool, except one ``result`` shares memory with (a backend
    may return its argument itself: that buffer is the result's now)."""
    import numpy as np

    outs = result if isinstance(result, tuple) else (result,)
    for buffer in buffers:
        if any(isinstance(o, np.ndarray) and np.shares_memory(o, buffer) for o in outs):
            continue
        PINNED.give(backend, buffer)
