"""Announcements from a lower layer to the layers above it, without importing them.

A layer never calls upward (docs/architecture.md, "Layers"): when the device library or the
plugin set is loaded again, the lower layer *announces* it here, and subscribers (dispatch) drop
what they derived from the old state.  Every announcement advances one process-wide generation,
so that a layer can tell whether a result it computed is still current.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["DEVICES", "PLUGINS", "TUNING", "announce", "generation", "subscribe"]

#: What changed: the device library was loaded again / the plugin set was discovered again /
#: this process recorded or cleared tuning measurements (prism_core/_tuning/tuning_records.py).
DEVICES = "devices"
PLUGINS = "plugins"
TUNING = "tuning"

_lock = threading.Lock()
_subscribers: list[Callable[[str], None]] = []
_generation = [0]


def subscribe(callback: Callable[[str], None]) -> None:
    """Call ``callback(what)`` after every announcement (in the announcing thread)."""
    with _lock:
        _subscribers.append(callback)


def announce(what: str) -> None:
    """Say that ``what`` changed: advance the generation, then tell every subscriber."""
    with _lock:
        _generation[0] += 1
        subscribers = list(_subscribers)
    for callback in subscribers:
        callback(what)


def generation() -> int:
    """How many announcements this process has seen."""
    return _generation[0]
