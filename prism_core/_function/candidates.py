"""Where a placed function may run: every backend judged for a call's arguments, with the
reasons a backend cannot run it, in the order an untuned function tries them."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prism_core.kernel import events as events
from prism_core.kernel.dispatch.eligibility import available, devices_in_scope, not_held

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.dispatch.scope import Scope
    from prism_core.kernel.plugins import PluginSet

__all__ = ["REFERENCE", "PlacementCandidate", "Traits", "judge", "traits"]

#: The reference backend: NumPy's arrays are the host's common currency.
REFERENCE = "numpy"


@dataclass(frozen=True)
class Traits:
    """What a backend's arrays are, learnt once by making one: whether the backend has arrays
    of its own (a backend computing on NumPy's arrays is no placement of its own), and whether
    they can be updated in place (JAX's cannot)."""

    own_arrays: bool
    mutable: bool


_lock = threading.Lock()
_traits: dict[str, tuple[int, Traits]] = {}


def traits(backend: Backend) -> Traits:
    """``backend``'s :class:`Traits` (asked once per backend and reload; imports its framework)."""
    now = events.generation()
    known = _traits.get(backend.name)
    if known is not None and known[0] == now:
        return known[1]
    import numpy as np

    try:
        probe = backend.asarray(np.zeros(2, dtype=np.int32))
        own = bool(backend.owns(probe))
    except Exception:  # a backend that makes no arrays: none of its own
        own, probe = False, None
    mutable = True
    if own:
        try:
            probe[0] = 1
        except TypeError:  # JAX: "JAX arrays are immutable"
            mutable = False
    found = Traits(own, mutable)
    with _lock:
        _traits[backend.name] = (now, found)
    return found


@dataclass(frozen=True)
class PlacementCandidate:
    """One backend judged for a call of a placed function: ``ok`` with the device it would run
    on, or the ``reasons`` it cannot."""

    backend: str
    device: str | None
    ok: bool
    reasons: tuple[str, ...] = ()
    #: The backend and device objects, for running (not shown).
    runner: Backend | None = field(default=None, repr=False, compare=False)
    target: DeviceDescription | None = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        where = self.backend + (f" on {self.device}" if self.device else "")
        return f"{where}: " + ("can run" if self.ok else "; ".join(self.reasons))

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "device": self.device,
            "ok": self.ok,
            "reasons": list(self.reasons),
        }


def judge(
    ps: PluginSet,
    scope: Scope,
    dtypes: Iterable[Any],
    home: str | None,
    *,
    backends: tuple[str, ...] | None,
    requires: Mapping[str, Any] | None,
    declined: Mapping[str, str],
) -> list[PlacementCandidate]:
    """Every backend judged for a call whose arrays have ``dtypes`` and live on ``home``'s
    backend, in the order an untuned function tries them: where the arguments live, the
    reference (NumPy), the rest by name; the ones that cannot run follow, with their reasons."""
    from prism_core.kernel.description.requirements import Requirement

    wanted = list(dict.fromkeys(dtypes))
    allowed = None if backends is None else {ps.backend_name(n) or n for n in backends}
    devices = devices_in_scope(scope)
    requirement = Requirement(dict(requires)) if requires else None
    ok: list[PlacementCandidate] = []
    not_ok: list[PlacementCandidate] = []
    for name in sorted(ps.backends):
        backend = ps.backends[name]
        reasons: list[str] = []
        device: DeviceDescription | None = None
        if scope.backend is not None and name != scope.backend:
            reasons.append(f"backend {scope.backend!r} is named by the scope")
        elif allowed is not None and name not in allowed:
            reasons.append(f"not in backends={sorted(allowed)}")
        elif name in declined:
            reasons.append(declined[name])
        else:
            availability = available(backend)
            if not availability:
                reasons.append(f"backend not available: {availability.reason}")
            elif not traits(backend).own_arrays:
                reasons.append("computes on another backend's arrays: no placement of its own")
            else:
                device, why = _device_for(ps, backend, devices, requirement)
                if device is None:
                    reasons.append(why)
                else:
                    why = not_held(backend, device, wanted)
                    if why:
                        reasons.append(f"dtype not held: {why}")
        where = device.device_type if device is not None else None
        if reasons:
            not_ok.append(PlacementCandidate(name, where, False, tuple(reasons)))
        else:
            ok.append(PlacementCandidate(name, where, True, (), backend, device))
    ok.sort(key=lambda c: (c.backend != home, c.backend != REFERENCE, c.backend))
    return ok + not_ok


def _device_for(
    ps: PluginSet,
    backend: Backend,
    devices: list[DeviceDescription],
    requirement: Any,
) -> tuple[DeviceDescription | None, str]:
    """The first device in scope that ``backend`` drives and that meets ``requirement``, or
    ``None`` with the reason."""
    reasons: list[str] = []
    for device in devices:
        drives = ps.drives(backend, device)
        if not drives:
            reasons.append(f"does not drive {device.device_type}: {drives.explain()}")
            continue
        if requirement is not None:
            met = requirement.match(device)
            if not met:
                reasons.append(f"requirement unmet on {device.device_type}: {met.explain()}")
                continue
        return device, ""
    if not devices:
        return None, "no device in scope"
    return None, "; ".join(reasons)
