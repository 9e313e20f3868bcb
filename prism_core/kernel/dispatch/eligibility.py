"""Which variants of an op can run a call in a scope, and why the others cannot: backends
installed and available, devices driven, requirements met, dtypes held and accelerated
(docs/dispatch.md)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

from prism_core.kernel import events as events
from prism_core.kernel.dispatch.arguments import ArraySpec, array_args
from prism_core.kernel.dispatch.decision import Candidate
from prism_core.kernel.errors import did_you_mean

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Availability, Backend
    from prism_core.kernel.contract.variant import Variant
    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.dispatch.registry import Op
    from prism_core.kernel.dispatch.scope import Scope

__all__ = [
    "WAY_OUT",
    "Eligible",
    "RankKey",
    "Ranking",
    "available",
    "devices_in_scope",
    "home",
    "judge",
    "known",
    "missing",
    "not_held",
    "rank_key",
    "unavailable",
    "verified",
]

#: An eligible candidate: the variant, the device it would run on, its backend.
Eligible: TypeAlias = "tuple[Variant, DeviceDescription | None, Backend | None]"
#: Eligible candidates, best first.
Ranking: TypeAlias = "tuple[Eligible, ...]"
#: An eligible candidate's sort key (:func:`rank_key`).
RankKey = tuple[int, int, int, int, str]

_lock = threading.Lock()
#: What dispatch learnt about this host, with the ``events`` generation it is valid for.
_availability: dict[str, tuple[int, Availability]] = {}
_present: list[tuple[int, list[DeviceDescription]]] = []


def devices_in_scope(scope: Scope) -> list[DeviceDescription]:
    if scope.device is not None:
        return [scope.device]
    now = events.generation()
    cached = _present[0] if _present else (None, [])
    if cached[0] == now:
        return cached[1]
    from prism_core.kernel.host import present_devices

    devices = [d.description for d in present_devices().devices]
    with _lock:
        _present[:] = [(now, devices)]
    return devices


def available(backend: Backend) -> Availability:
    now = events.generation()
    cached = _availability.get(backend.name)
    if cached is not None and cached[0] == now:
        return cached[1]
    result = backend.availability()
    _availability[backend.name] = (now, result)
    return result


def known(backend: Backend) -> bool:
    """Whether this backend's availability is known (asked since the last reload)."""
    cached = _availability.get(backend.name)
    return cached is not None and cached[0] == events.generation()


def unavailable(backend: Backend | None) -> str | None:
    """Why ``backend`` cannot run here (asking it now, which may import its framework)."""
    if backend is None or (availability := available(backend)):
        return None
    return f"backend {backend.name!r} is not available: {availability.reason}"


def rank_key(scope: Scope, variant: Variant, moves: int = 0) -> RankKey:
    """The sort key of an eligible variant: the policy, then (data stays where it is) whether
    it must move the call's data, then priority, specificity and name."""
    policy = 0 if (scope.prefer != "reference" or variant.reference) else 1
    return (policy, moves, -variant.priority, -variant.specificity, variant.name)


def home(op: Op, args: Sequence[object], reference: Variant | None) -> Backend | None:
    """The backend the call's data belongs to: the owner of the first array that is not the
    reference backend's (a torch tensor among NumPy arrays), else the reference backend."""
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    ref = ps.backends.get(reference.backend) if reference is not None else None
    for a in array_args(op, args):
        if isinstance(a, ArraySpec):
            continue
        owner = ps.owner(a)
        if owner is not None and owner is not ref:
            return owner
    return ref


#: The way out of Prism to NumPy: its result is a NumPy array whatever the argument's backend
#: and the scope (docs/backends.md, "Where a call runs").
WAY_OUT = "to_numpy"


def judge(
    op: Op, variant: Variant, scope: Scope, dtypes: list[str]
) -> tuple[DeviceDescription | None, Backend | None, list[str]]:
    """The device a variant would run on, its backend, or the reasons it cannot run."""
    from prism_core.kernel.plugins import Unable, plugins

    way_out = op.name == WAY_OUT and variant.reference  # NumPy's, whichever backend is named
    if scope.backend is not None and variant.backend != scope.backend and not way_out:
        wrong = f"backend {variant.backend!r} is not the one in scope ({scope.backend!r})"
        return None, None, [wrong]
    ps = plugins()
    backend = ps.backends.get(variant.backend)
    if backend is None:
        hint = did_you_mean(variant.backend, ps.backends)
        return None, None, [f"backend {variant.backend!r} is not installed{hint}"]
    # Availability is asked in rank order until a candidate can run (``verified``): asking
    # imports the framework (torch: 1-3 s), which a call on NumPy must not pay.  Known, it counts.
    if not scope.simulated and known(backend) and (why := unavailable(backend)) is not None:
        return None, backend, [why]
    # A backend whose settings() raises (they key its tuned choices) is skipped.
    settings = ps.backend_settings(backend)
    if isinstance(settings, Unable):
        return None, backend, [settings.reason]
    reasons: list[str] = []
    for dev in devices_in_scope(scope):
        drive = ps.drives(backend, dev)
        if isinstance(drive, Unable):
            reasons.append(drive.reason)
            continue
        if not drive:
            reasons.append(
                f"{variant.backend!r} does not drive {dev.device_type} ({drive.explain()})"
            )
            continue
        match = variant.requirement.match(dev)
        if not match:
            reasons.extend(f"{dev.device_type}: {r}" for r in match.reasons)
            continue
        unheld = not_held(backend, dev, dtypes)
        if unheld:
            reasons.append(unheld)
            continue
        if variant.dtype_support:
            missing = [d for d in dict.fromkeys(dtypes) if not dev.supports(op.name, d)]
            if missing:
                reasons.append(
                    f"{dev.device_type}: no feature accelerates {op.name} in {', '.join(missing)}"
                )
                continue
        return dev, backend, []
    if not reasons:
        reasons.append("no device in scope")
    return None, backend, list(dict.fromkeys(reasons))


def not_held(backend: Backend, device: DeviceDescription, dtypes: Sequence[str]) -> str:
    """Why ``backend`` cannot take arrays of ``dtypes`` on ``device`` (not among the dtypes it
    declares, ``Backend.dtypes``, or asking it raised); empty when it can."""
    from prism_core.kernel.plugins import Unable, plugins

    held = plugins().held_dtypes(backend, device)
    if isinstance(held, Unable):
        return held.reason
    if held is None or not dtypes:
        return ""
    from prism_core.kernel.description.dtypes import dtype_name

    absent = [n for n in dict.fromkeys(map(dtype_name, dtypes)) if n not in held]
    if not absent:
        return ""
    return (
        f"{backend.name} holds no {', '.join(absent)} on {device.device_type} "
        f"(it holds {', '.join(sorted(held)) or 'no dtype'})"
    )


def missing(variant: Variant) -> str | None:
    """Why ``variant``'s function cannot be made, where that can be told without importing
    anything (``fn.__prism_missing__()``: a namespace backend's variant of a function its
    library lacks); else ``None``.  Asked once its backend is available."""
    ask = getattr(variant.fn, "__prism_missing__", None)
    return None if ask is None else ask()


def verified(ranked: Ranking) -> tuple[Ranking, tuple[Candidate, ...]]:
    """The candidates without those whose backend is not available or whose function cannot
    be made (:func:`missing`), asked in rank order until one can run; those after it are asked
    only if a call falls back to them (failing there, recorded as a fallback)."""
    kept: list[Eligible] = []
    rejected: list[Candidate] = []
    for i, (variant, _dev, backend) in enumerate(ranked):
        why = unavailable(backend) or missing(variant)
        if why is None:
            kept.extend(ranked[i:])
            break
        rejected.append(Candidate.rejected(variant, [why]))
    return tuple(kept), tuple(rejected)
