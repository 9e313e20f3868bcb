"""Where a stage runs: its :class:`Placement`, resolved when the stage is entered.

A stage's ``preferred_backend`` names are classified when the stage is made (a backend, a
device type or family, a device word); :func:`preferred_placement` takes the first available
here, :func:`pinned_placement` places a stage pinned to a device, and
:func:`override_placement` one that ``stage_overrides`` places.  The rules: docs/pipelines.md,
"Where a stage runs".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core._pipeline.report import PipelineError
from prism_core.kernel.dispatch.scope import DeviceNotPresentError
from prism_core.kernel.errors import did_you_mean

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.description.device import DeviceDescription

__all__ = ["Placement", "override_placement", "pinned_placement", "preferred_placement"]


@dataclass(frozen=True)
class Placement:
    """Where a stage runs: the scope changes put in force, in words, and why.

    ``lenient``: calls the placement cannot run run in the scope the stage was entered in
    (automatic mode with a taken preference).
    """

    changes: Mapping[str, Any]
    placement: str
    backend: str | None
    device: str | None
    simulated: bool
    why: str
    skipped: tuple[str, ...] = ()
    lenient: bool = False


def _words(backend: str | None, device: str | None, simulated: bool, split: bool) -> str:
    if backend and device:
        text = f"{backend} on {device}"
    elif backend:
        text = f"backend {backend}"
    elif device:
        text = f"device {device}"
    else:
        text = "automatic"
    if device and simulated:
        text += " (simulated)"
    if split:
        text += ", split"
    return text


def _name_part(device_type: str) -> str:
    return device_type.partition(".")[2] or device_type


def _word_matches(desc: DeviceDescription, word: str) -> bool:
    """Whether ``desc`` is a ``word`` device: its vendor, its kind, or the start of the name
    of its type or one of its ancestors (``graviton`` for ``aws.graviton3``, ``h100`` for
    ``nvidia.h100-pcie``), followed by nothing, a digit or a dash."""
    if word in (desc.vendor, desc.kind):
        return True
    for t in desc.lineage:
        part = _name_part(t)
        if part == word:
            return True
        if part.startswith(word) and (part[len(word)].isdigit() or part[len(word)] == "-"):
            return True
    return False


@dataclass(frozen=True)
class _Preference:
    """One name of ``preferred_backend``, classified when the stage is made."""

    name: str
    kind: str  # "backend", "device" (a type or family), "word"
    target: str  # the backend's own name, the device type, or the word


def _classify(stage_name: str, name: str, with_device: bool) -> _Preference:
    from prism_core.kernel.devices import default_library
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    found = ps.backend_name(name)
    if found is not None:
        return _Preference(name, "backend", found)
    lib = default_library()
    backends = sorted({*ps.backends, *(a for b in ps.backends.values() for a in b.aliases)})
    if with_device:
        raise ValueError(
            f"stage {stage_name!r}: with device= pinned, preferred_backend names the backends to "
            f"try on it, and {name!r} is not an installed backend"
            f"{did_you_mean(name, backends)}; installed: {', '.join(backends)}"
        )
    if name in lib:
        return _Preference(name, "device", name)
    if "." not in name and any(_word_matches(d, name) for d in lib):
        return _Preference(name, "word", name)
    words = sorted(
        {d.vendor for d in lib if d.vendor}
        | {d.kind for d in lib if d.kind}
        | {_name_part(d.device_type).rstrip("0123456789") for d in lib}
    )
    raise ValueError(
        f"stage {stage_name!r}: preferred_backend {name!r} is neither an installed backend nor "
        f"a device type, family, vendor or kind the library describes"
        f"{did_you_mean(name, [*backends, *(d.device_type for d in lib), *words])}; backends: "
        f"{', '.join(backends)}; device words: {', '.join(w for w in words if w)}"
    )


def _present_match(pref: _Preference) -> DeviceDescription | str:
    """The first present device the preference names, or why there is none."""
    from prism_core.kernel.host import present_devices

    found = present_devices().devices
    for inst in found:
        desc = inst.description
        if (pref.kind == "device" and desc.is_a(pref.target)) or (
            pref.kind == "word" and _word_matches(desc, pref.target)
        ):
            return desc
    here = ", ".join(i.description.device_type for i in found) or "none"
    what = f"a {pref.target!r} device" if pref.kind == "word" else repr(pref.target)
    return f"{pref.name!r}: no present device is {what} (present: {here})"


def _backend_unavailable(backend: Backend) -> str | None:

    from prism_core.kernel.dispatch.eligibility import available

    availability = available(backend)
    return (
        None
        if availability
        else f"backend {backend.name!r} is not available: " + str(availability.reason)
    )


def preferred_placement(stage: str, preferences: Sequence[_Preference], dispatch: str) -> Placement:
    """Where stage ``stage``, pinned to no device, runs: the first of its ``preferences``
    available here (a backend available, a device present), else automatic dispatch (a
    ``dispatch="strict"`` stage: :class:`PipelineError`)."""
    strict = {"strict": True} if dispatch == "strict" else {}
    if not preferences:
        return Placement(
            MappingProxyType(strict),
            "automatic",
            None,
            None,
            False,
            "no placement named: dispatch chooses per call",
        )
    skipped: list[str] = []
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    for pref in preferences:
        if pref.kind == "backend":
            backend = ps.backends.get(pref.target)
            why_not = (
                f"backend {pref.target!r} is no longer installed"
                if backend is None
                else _backend_unavailable(backend)
            )
            if why_not is None:
                return Placement(
                    MappingProxyType({"backend": pref.target, **strict}),
                    _words(pref.target, None, False, False),
                    pref.target,
                    None,
                    False,
                    f"preferred_backend {pref.name!r}: available",
                    tuple(skipped),
                    lenient=dispatch == "auto",
                )
            skipped.append(f"{pref.name!r}: {why_not}")
            continue
        found = _present_match(pref)
        if isinstance(found, str):
            skipped.append(found)
            continue
        return Placement(
            MappingProxyType({"device": found, "simulated": False, **strict}),
            _words(None, found.device_type, False, False),
            None,
            found.device_type,
            False,
            f"preferred_backend {pref.name!r}: {found.device_type} is present",
            tuple(skipped),
            lenient=dispatch == "auto",
        )
    if dispatch == "strict":
        raise PipelineError(
            f"stage {stage!r} has dispatch='strict' and none of its preferences is "
            f"available here: {'; '.join(skipped)}; use dispatch='auto' to run it in "
            "automatic dispatch instead"
        )
    return Placement(
        MappingProxyType({}),
        "automatic",
        None,
        None,
        False,
        "none of the preferences is available here: automatic dispatch",
        tuple(skipped),
    )


def pinned_placement(
    stage: str,
    device: DeviceDescription,
    simulate: bool,
    preferences: Sequence[_Preference],
    dispatch: str,
) -> Placement:
    """Where stage ``stage``, pinned to ``device``, runs: there (present, or ``simulate``d),
    with the first of its preferred backends that drives it, else any that does."""
    strict = {"strict": True} if dispatch == "strict" else {}
    desc = device
    if not simulate:
        from prism_core.kernel.host import present_devices

        found = present_devices().devices
        match = next((i.description for i in found if i.description.is_a(desc.device_type)), None)
        if match is None:
            here = ", ".join(i.description.device_type for i in found) or "none"
            raise DeviceNotPresentError(
                f"stage {stage!r} is pinned to device {desc.device_type!r}, which is not "
                f"present on this host (present: {here}); use simulate=True to plan and run "
                "it as simulated, or preferred_backend= to run it elsewhere when absent"
            )
        desc = match
    where = desc.device_type
    changes: dict[str, Any] = {"device": desc, "simulated": simulate, **strict}
    why = "device= pinned" + (" (simulated)" if simulate else "")
    if not preferences:
        return Placement(
            MappingProxyType(changes),
            _words(None, where, simulate, False),
            None,
            where,
            simulate,
            why,
        )
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    skipped: list[str] = []
    for pref in preferences:
        backend = ps.backends.get(pref.target)
        why_not = (
            f"backend {pref.target!r} is no longer installed"
            if backend is None
            else (None if simulate else _backend_unavailable(backend))
        )
        if why_not is None and backend is not None:
            drives = ps.drives(backend, desc)
            why_not = (
                None if drives else f"{pref.target!r} does not drive {where} ({drives.explain()})"
            )
        if why_not is None:
            changes["backend"] = pref.target
            return Placement(
                MappingProxyType(changes),
                _words(pref.target, where, simulate, False),
                pref.target,
                where,
                simulate,
                f"{why}; preferred_backend {pref.name!r} drives it",
                tuple(skipped),
            )
        skipped.append(f"{pref.name!r}: {why_not}")
    if dispatch == "strict":
        raise PipelineError(
            f"stage {stage!r} has dispatch='strict' and none of its preferred backends "
            f"can run on {where}: {'; '.join(skipped)}"
        )
    return Placement(
        MappingProxyType(changes),
        _words(None, where, simulate, False),
        None,
        where,
        simulate,
        f"{why}; none of the preferred backends can run on it: any backend that drives it",
        tuple(skipped),
    )


def override_placement(value: Mapping[str, Any], dispatch: str) -> Placement:
    """The placement a ``stage_overrides`` value gives a stage whose dispatch is ``dispatch``."""
    changes = {k: v for k, v in value.items() if k != "note"}
    if dispatch == "strict" and "strict" not in changes:
        changes["strict"] = True
    device = changes.get("device")
    simulated = bool(changes.get("simulated", False))
    backend = changes.get("backend")
    device_type = device.device_type if device is not None else None
    return Placement(
        MappingProxyType(changes),
        _words(backend, device_type, simulated, changes.get("split") is not None),
        backend,
        device_type,
        simulated and device is not None,
        value.get("note") or "assigned by stage_overrides()",
    )
