"""The backends installed in this process, as users see them:
``prism_core.extending.backends()`` and ``prism_core.extending.get_backend(name)``.

Plugins contribute backends (``prism_backends`` hook, ``plugins.py``); this module answers, for
each, whether it runs here and why not, its priority, the devices present that it drives and
the facts it reports about its runtime (:meth:`Backend.capabilities`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from prism_core.kernel.contract.backend import Backend
from prism_core.kernel.errors import describe_exception
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.description.device import DeviceDescription

__all__ = ["BackendInfo", "backends", "check_capabilities", "get_backend"]


@home("prism_core.extending")
@dataclass(frozen=True)
class BackendInfo:
    """One installed backend: availability (with the reason when it is not available), the
    plugin that provides it, its priority, the present devices it drives and its capabilities
    (empty when it is not available; ``{"error": ...}`` when asking raised)."""

    name: str
    aliases: tuple[str, ...]
    plugin: str
    available: bool
    reason: str
    version: str | None
    priority: int
    description: str
    drives: tuple[str, ...]
    capabilities: dict[str, Any]
    backend: Backend = field(repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        # Every field but the backend object, tuples as lists.
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "backend"}
        return out | {"aliases": list(self.aliases), "drives": list(self.drives)}


def get_backend(name: str) -> Backend:
    """The installed backend called ``name`` or aliased so (``"pytorch"`` is ``"torch"``);
    :class:`PluginError` naming close matches and the installed backends when there is none."""
    from prism_core.kernel.plugins import plugins

    if not isinstance(name, str):
        raise TypeError(
            f"get_backend(): name must be a backend name such as 'numpy'; got {name!r} "
            f"({type(name).__name__})"
        )
    return plugins().backend(name)


def backends() -> list[BackendInfo]:
    """Every installed backend, the preferred first (priority, then name)."""
    from prism_core.kernel.host import present_devices
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    present = [inst.description for inst in present_devices().devices]
    out = []
    for backend in ps.backends.values():
        plugin = next((r.name for r in ps.records.values() if backend.name in r.backends), "")
        state = _availability(backend)
        capabilities: dict[str, Any] = {}
        if state.available:
            try:
                capabilities = dict(backend.capabilities())
            except Exception as exc:  # a plugin's bug must not hide the other backends
                capabilities = {"error": describe_exception(exc)}
        drives = tuple(d.device_type for d in present if ps.drives(backend, d))
        out.append(
            BackendInfo(
                name=backend.name,
                aliases=tuple(backend.aliases),
                plugin=plugin,
                available=state.available,
                reason=state.reason,
                version=state.version,
                priority=backend.priority,
                description=backend.description,
                drives=drives,
                capabilities=capabilities,
                backend=backend,
            )
        )
    out.sort(key=lambda b: (-b.priority, b.name))
    return out


def _availability(backend: Backend) -> Any:
    from prism_core.kernel.contract.backend import Availability

    try:
        return backend.availability()
    except Exception as exc:  # the contract says never raise; say so when one does
        return Availability(False, f"availability() raised {describe_exception(exc)}")


def check_capabilities(devices: Sequence[DeviceDescription]) -> None:
    """Ask every installed backend's capability methods as dispatch and tuning ask them
    (``settings()``, ``dtypes()``, and ``can_drive`` and ``dtypes`` on each of ``devices``), so
    that one that raises is on its plugin's record before any op runs: ``prism plugins`` and
    ``prism doctor`` show it.  Strict mode raises :class:`PluginError` for the first."""
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    for backend in list(ps.backends.values()):
        ps.backend_settings(backend)
        ps.held_dtypes(backend)
        for device in devices:
            if ps.drives(backend, device):
                ps.held_dtypes(backend, device)
