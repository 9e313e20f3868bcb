"""Stages: a named block of a pipeline whose op calls run under the stage's own scope.

``with prism.stage(name, preferred_backend=..., device=...):`` resolves a *placement* when the
block is entered, puts it in force as a scope (those ``use_backend`` and ``device`` make, so
dispatch needs nothing new), and records the block's moves, fallbacks, splits and wall time for
the run or plan it belongs to (a :class:`StageHost` in a context variable) and on the object
``with ... as s`` gives.  :func:`stage_overrides` places stages from outside.  The placement
rules and leniency: docs/pipelines.md, "Where a stage runs".
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core._pipeline.report import PipelineError, StageFallback, StageReport
from prism_core._pipeline.split import recording as split_recording
from prism_core.kernel.dispatch import movement
from prism_core.kernel.dispatch import scope as _scope_module
from prism_core.kernel.dispatch.fallback import BackendError, FallbackWarning, fallback_recording
from prism_core.kernel.dispatch.interception import LENIENT, Rescued
from prism_core.kernel.dispatch.scope import SCOPE, DeviceNotPresentError, ScopeBlock
from prism_core.kernel.errors import describe_exception, did_you_mean, user_stacklevel
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.dispatch.scope import Scope

__all__ = [
    "DISPATCH_MODES",
    "OVERRIDE_KEYS",
    "Placement",
    "Stage",
    "StageHost",
    "StageRun",
    "current_stage",
    "stage",
    "stage_overrides",
]

DISPATCH_MODES = ("auto", "strict")
#: The keys a :func:`stage_overrides` value may have: scope changes, and a note for the report.
OVERRIDE_KEYS = ("device", "simulated", "backend", "prefer", "strict", "execution", "split", "note")


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


# -- placements --------------------------------------------------------------------------------


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


# -- overrides ---------------------------------------------------------------------------------

_OVERRIDES: contextvars.ContextVar[Mapping[str, Mapping[str, Any]]] = contextvars.ContextVar(
    "prism_stage_overrides", default=MappingProxyType({})
)


def _check_override(name: Any, value: Any) -> Mapping[str, Any]:
    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.devices import default_library
    from prism_core.kernel.dispatch.scope import checked_backend, present_device

    if not isinstance(name, str):
        raise TypeError(
            f"stage_overrides(): keys must be stage names (strings); got {_describe(name)}"
        )
    if not isinstance(value, Mapping):
        raise TypeError(
            f"stage_overrides(): the value for stage {name!r} must be a mapping of scope changes "
            f"such as {{'device': 'nvidia.h100-sxm', 'note': 'assigned by a strategy'}}; got "
            f"{_describe(value)}"
        )
    unknown = [k for k in value if k not in OVERRIDE_KEYS]
    if unknown:
        raise ValueError(
            f"stage_overrides(): stage {name!r} has unknown key {unknown[0]!r}"
            f"{did_you_mean(str(unknown[0]), OVERRIDE_KEYS)}; accepted: {', '.join(OVERRIDE_KEYS)}"
        )
    out = dict(value)
    note = out.get("note")
    if note is not None and not isinstance(note, str):
        raise TypeError(
            f"stage_overrides(): 'note' of stage {name!r} must be a string; got {_describe(note)}"
        )
    simulated = out.get("simulated", False)
    if not isinstance(simulated, bool):
        raise TypeError(
            f"stage_overrides(): 'simulated' of stage {name!r} must be True or False; got "
            f"{_describe(simulated)}"
        )
    device = out.get("device")
    if device is not None:
        if isinstance(device, str):
            device = default_library().get(device)
        elif not isinstance(device, DeviceDescription):
            raise TypeError(
                f"stage_overrides(): 'device' of stage {name!r} must be a device type or a "
                f"DeviceDescription; got {_describe(device)}"
            )
        out["device"] = device if simulated else present_device(device)
    backend = out.get("backend")
    if backend is not None:
        if not isinstance(backend, str):
            raise TypeError(
                f"stage_overrides(): 'backend' of stage {name!r} must be a backend name; got "
                f"{_describe(backend)}"
            )
        out["backend"] = checked_backend(backend)
    return MappingProxyType(out)


@contextlib.contextmanager
def stage_overrides(mapping: Mapping[str, Mapping[str, Any]]) -> Iterator[None]:
    """Place the stages named in ``mapping`` as it says, in what follows (this thread or task).

    Each value is a mapping of scope changes as scopes take them (keys ``device``,
    ``simulated``, ``backend``, ``prefer``, ``strict``, ``execution``, ``split``), plus an
    optional ``"note"`` the stage's report gives as why it ran there.  A stage named in it
    takes these changes *instead of* its own placement (its ``device=`` and
    ``preferred_backend``); a ``dispatch="strict"`` stage stays strict unless the value says
    ``strict``.  Devices are looked up (and must be present unless ``simulated``) and backends
    checked when ``stage_overrides`` is called.  Nested calls add to the outer mapping; the
    inner value wins for a name in both.
    """
    if not isinstance(mapping, Mapping):
        raise TypeError(
            "stage_overrides(): mapping must map stage names to scope changes, such as "
            f"{{'alignment': {{'backend': 'torch'}}}}; got {_describe(mapping)}"
        )
    checked = {name: _check_override(name, value) for name, value in mapping.items()}
    merged = MappingProxyType({**_OVERRIDES.get(), **checked})
    token = _OVERRIDES.set(merged)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # ended in another context: not ours to reset
            _OVERRIDES.reset(token)


def _override_placement(stage: Stage, value: Mapping[str, Any]) -> Placement:
    changes = {k: v for k, v in value.items() if k != "note"}
    if stage.dispatch == "strict" and "strict" not in changes:
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


# -- hosts: the run or plan a stage reports to -------------------------------------------------


class StageHost:
    """What stages report to while a pipeline runs or is planned (``pipeline.py`` subclasses
    it); in force through a context variable, so each thread or task has its own.

    ``planning``: stages only resolve their placement and hand it over (``entered``); the
    planner decides what the calls inside do.
    """

    planning = False

    def entered(self, run: StageRun) -> None:
        """``run`` was entered, its scope is in force."""

    def exited(self, run: StageRun) -> None:
        """``run`` ended (its report is set unless planning), its scope still in force."""


_HOST: contextvars.ContextVar[StageHost | None] = contextvars.ContextVar(
    "prism_stage_host", default=None
)
_CURRENT: contextvars.ContextVar[StageRun | None] = contextvars.ContextVar(
    "prism_stage", default=None
)


def current_stage() -> StageRun | None:
    """The stage whose block is running in this thread or task, or ``None``."""
    return _CURRENT.get()


# -- stages ------------------------------------------------------------------------------------


_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


@home("prism_core.pipelines")
class StageRun:
    """One entry into a stage's block: what ``with prism.stage(...) as s`` gives.

    ``name`` and ``placement`` are known when the block starts; ``report`` (a
    :class:`StageReport`) once it has ended (``None`` while planning).  ``scope`` is the scope
    the stage put in force.
    """

    def __init__(self, stage: Stage, placement: Placement) -> None:
        self.stage = stage
        self.name = stage.name
        self.placement = placement
        self.scope: Scope | None = None
        self.report: StageReport | None = None
        #: The value of the scope variable where the stage was entered (lenient calls run in it).
        self.outer: Scope | None = None
        self.fallbacks: list[StageFallback] = []
        self._stack = contextlib.ExitStack()
        self._moves: list[movement.MoveRecord] = []
        self._dispatch_fallbacks: list[Any] = []
        self._splits: list[Any] = []
        self._started = 0.0
        self._frame: Any = None
        self._tokens: list[tuple[contextvars.ContextVar[Any], contextvars.Token[Any]]] = []

    def __repr__(self) -> str:
        return f"<StageRun {self.name!r}: {self.placement.placement}>"

    # The handler dispatch calls (``LENIENT``) when the placement cannot run a call.
    def _lenient(
        self, op: Rescued, args: tuple[Any, ...], kwargs: dict[str, Any], error: Exception
    ) -> Any:
        if not self.innermost():
            raise error  # a block the user entered inside the stage: its own rules hold
        token = SCOPE.set(self.outer)
        try:
            result = op.function(*args, **kwargs)
        finally:
            SCOPE.reset(token)
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        self.fallbacks.append(StageFallback(op.name, None, first_line, "automatic dispatch"))
        if isinstance(error, BackendError):
            key = (self.name, op.name)
            with _warned_lock:
                first = key not in _warned
                _warned.add(key)
            if first:
                warnings.warn(
                    f"stage {self.name!r} ({self.placement.placement}): {first_line}; ran in "
                    "automatic dispatch instead",
                    FallbackWarning,
                    stacklevel=user_stacklevel(),
                )
        return result

    def innermost(self) -> bool:
        """Whether the stage's own scope block is the innermost one in force here (not a
        ``prism.device``/``use_backend`` block entered inside the stage, even one with the same
        content, which scopes being interned makes the same scope object)."""
        return _scope_module.innermost_block() is self._frame

    def _set(self, var: contextvars.ContextVar[Any], value: Any) -> None:
        self._tokens.append((var, var.set(value)))

    def _enter(self) -> StageRun:
        self.outer = SCOPE.get()
        block = ScopeBlock(dict(self.placement.changes))
        self.scope = self._stack.enter_context(block)
        self._frame = _scope_module.innermost_block()
        self._set(_CURRENT, self)
        host = _HOST.get()
        try:
            if host is not None and host.planning:
                host.entered(self)
                return self
            self._moves = self._stack.enter_context(movement.recording())
            self._dispatch_fallbacks = self._stack.enter_context(fallback_recording())
            self._splits = self._stack.enter_context(split_recording())
            if self.placement.lenient:
                self._set(LENIENT, self._lenient)
            if host is not None:
                host.entered(self)
        except BaseException:
            self._leave()
            raise
        self._started = time.perf_counter()
        return self

    def _exit(self, exc: BaseException | None) -> None:
        host = _HOST.get()
        try:
            if host is not None and host.planning:
                host.exited(self)
                return
            if exc is None:
                _synchronize(self.placement)
            seconds = time.perf_counter() - self._started
            error = None if exc is None else describe_exception(exc)
            p = self.placement
            self.report = StageReport(
                name=self.name,
                placement=p.placement,
                backend=p.backend,
                device=p.device,
                simulated=p.simulated,
                dispatch=self.stage.dispatch,
                why=p.why,
                skipped=p.skipped,
                seconds=seconds,
                moves=tuple(self._moves),
                fallbacks=_merge_fallbacks(
                    [
                        StageFallback(r.op, r.variant, r.error, r.fell_back_to)
                        for r in self._dispatch_fallbacks
                    ]
                    + self.fallbacks
                ),
                splits=tuple(self._splits),
                error=error,
            )
            add_note = getattr(exc, "add_note", None)  # Python 3.11+
            if add_note is not None:
                add_note(f"(raised in stage {self.name!r}, {p.placement})")
            if host is not None:
                host.exited(self)
        finally:
            self._leave(exc)

    def _leave(self, exc: BaseException | None = None) -> None:
        for var, token in reversed(self._tokens):
            with contextlib.suppress(ValueError):  # ended in another context: not ours
                var.reset(token)
        self._tokens.clear()
        if exc is None:
            self._stack.close()
        else:
            self._stack.__exit__(type(exc), exc, exc.__traceback__)


def _merge_fallbacks(items: Sequence[StageFallback]) -> tuple[StageFallback, ...]:
    """The same fallback happening many times (a stage in a loop) is one entry with a count."""
    merged: dict[tuple[str, str | None, str, str | None], StageFallback] = {}
    for f in items:
        key = (f.op, f.failed, f.error, f.instead)
        seen = merged.get(key)
        merged[key] = (
            f
            if seen is None
            else StageFallback(f.op, f.failed, f.error, f.instead, seen.count + f.count)
        )
    return tuple(merged.values())


def _synchronize(placement: Placement) -> None:
    """Wait for the backends the stage may have run on, so that its time is its work's."""
    from prism_core.kernel.dispatch.eligibility import available, known
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    if placement.backend is not None:
        backend = ps.backends.get(placement.backend)
        if backend is not None:
            backend.synchronize()
        return
    device = placement.changes.get("device")
    for backend in list(ps.backends.values()):
        # Only backends this process already asked about: asking would import the framework.
        if not known(backend) or not available(backend):
            continue
        if device is None or ps.drives(backend, device):
            backend.synchronize()


@home("prism_core.pipelines")
class Stage:
    """A stage as :func:`stage` made it: checked arguments, placed when entered.

    A context manager (``with``, each entry a :class:`StageRun`), and a decorator: a function
    decorated with it runs in the stage at every call.
    """

    def __init__(
        self,
        name: str,
        preferences: tuple[_Preference, ...],
        device: DeviceDescription | None,
        simulate: bool,
        dispatch: str,
    ) -> None:
        self.name = name
        self.preferences = preferences
        self.device = device
        self.simulate = simulate
        self.dispatch = dispatch

    def __repr__(self) -> str:
        parts = [repr(self.name)]
        if self.device is not None:
            parts.append(f"device={self.device.device_type!r}")
        if self.simulate:
            parts.append("simulate=True")
        if self.preferences:
            parts.append(f"preferred_backend={[p.name for p in self.preferences]!r}")
        parts.append(f"dispatch={self.dispatch!r}")
        return f"<Stage {' '.join(parts)}>"

    def resolve(self) -> Placement:
        """Where the stage would run if entered now (:func:`stage_overrides` included); raises
        what entering would raise (a pinned device absent, a strict stage with no preference
        available)."""
        override = _OVERRIDES.get().get(self.name)
        if override is not None:
            return _override_placement(self, override)
        strict = {"strict": True} if self.dispatch == "strict" else {}
        if self.device is not None:
            return self._pinned(strict)
        if not self.preferences:
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
        for pref in self.preferences:
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
                        lenient=self.dispatch == "auto",
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
                lenient=self.dispatch == "auto",
            )
        if self.dispatch == "strict":
            raise PipelineError(
                f"stage {self.name!r} has dispatch='strict' and none of its preferences is "
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

    def _pinned(self, strict: Mapping[str, Any]) -> Placement:
        assert self.device is not None
        desc = self.device
        if not self.simulate:
            from prism_core.kernel.host import present_devices

            found = present_devices().devices
            match = next(
                (i.description for i in found if i.description.is_a(desc.device_type)), None
            )
            if match is None:
                here = ", ".join(i.description.device_type for i in found) or "none"
                raise DeviceNotPresentError(
                    f"stage {self.name!r} is pinned to device {desc.device_type!r}, which is not "
                    f"present on this host (present: {here}); use simulate=True to plan and run "
                    "it as simulated, or preferred_backend= to run it elsewhere when absent"
                )
            desc = match
        where = desc.device_type
        changes: dict[str, Any] = {"device": desc, "simulated": self.simulate, **strict}
        why = "device= pinned" + (" (simulated)" if self.simulate else "")
        if not self.preferences:
            return Placement(
                MappingProxyType(changes),
                _words(None, where, self.simulate, False),
                None,
                where,
                self.simulate,
                why,
            )
        from prism_core.kernel.plugins import plugins

        ps = plugins()
        skipped: list[str] = []
        for pref in self.preferences:
            backend = ps.backends.get(pref.target)
            why_not = (
                f"backend {pref.target!r} is no longer installed"
                if backend is None
                else (None if self.simulate else _backend_unavailable(backend))
            )
            if why_not is None and backend is not None:
                drives = ps.drives(backend, desc)
                why_not = (
                    None
                    if drives
                    else f"{pref.target!r} does not drive {where} ({drives.explain()})"
                )
            if why_not is None:
                changes["backend"] = pref.target
                return Placement(
                    MappingProxyType(changes),
                    _words(pref.target, where, self.simulate, False),
                    pref.target,
                    where,
                    self.simulate,
                    f"{why}; preferred_backend {pref.name!r} drives it",
                    tuple(skipped),
                )
            skipped.append(f"{pref.name!r}: {why_not}")
        if self.dispatch == "strict":
            raise PipelineError(
                f"stage {self.name!r} has dispatch='strict' and none of its preferred backends "
                f"can run on {where}: {'; '.join(skipped)}"
            )
        return Placement(
            MappingProxyType(changes),
            _words(None, where, self.simulate, False),
            None,
            where,
            self.simulate,
            f"{why}; none of the preferred backends can run on it: any backend that drives it",
            tuple(skipped),
        )

    def __enter__(self) -> StageRun:
        open_stage = _CURRENT.get()
        if open_stage is not None:
            raise PipelineError(
                f"stage {self.name!r} was entered inside stage {open_stage.name!r}: stages do not "
                f"nest; end {open_stage.name!r} first (a stage is a step of the pipeline, and "
                "each call belongs to one)"
            )
        run = StageRun(self, self.resolve())
        run._enter()
        # The context manager protocol calls __exit__ on this object, not on the run: keep the
        # run where __exit__ finds it in this context.
        return run

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        run = _CURRENT.get()
        if run is None or run.stage is not self:
            return  # ended in another context than the one it was entered in: nothing of ours
        run._exit(exc)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorate ``fn`` so that each of its calls runs in this stage."""
        if not callable(fn):
            raise TypeError(f"stage(...) decorates a function; got {_describe(fn)}")
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return await fn(*args, **kwargs)

            return run_async

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return run


def stage(
    name: str,
    *,
    preferred_backend: str | Sequence[str] | None = None,
    device: str | DeviceDescription | None = None,
    simulate: bool = False,
    dispatch: str = "auto",
) -> Stage:
    """A named stage of a pipeline: ``with prism.stage("alignment", ...):``.

    :param name: the stage's name in reports and plans (and in ``stage_overrides``).
    :param preferred_backend: a name or a list of names in order of preference: backends
        (``"torch"``), device types or families (``"nvidia.h100-sxm"``, ``"nvidia.hopper"``) or
        device words (a vendor ``"nvidia"``, a kind ``"cpu"``, a name's start ``"graviton"``).
        The first available here is used; with ``device=``, the backends to try on it.
    :param device: pin the stage to this device (a device type or family, or a
        :class:`DeviceDescription`); it must be present unless ``simulate=True``.
    :param simulate: run the pinned device as simulated (selection as on it, execution on the
        reference backend), for planning and testing without it.
    :param dispatch: ``"auto"`` (a preference that is not available is passed over, and calls
        the placement cannot run run in automatic dispatch) or ``"strict"`` (no preference
        available is an error, and nothing in the stage falls back).

    The arguments are checked, and the names classified, when ``stage()`` is called; where the
    stage runs is decided when the block is entered.  Stages do not nest.
    """
    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.devices import default_library

    if not isinstance(name, str) or not name:
        raise TypeError(f"stage(): name must be a non-empty string; got {_describe(name)}")
    if not isinstance(dispatch, str):
        raise TypeError(
            f"stage({name!r}): dispatch must be 'auto' or 'strict'; got {_describe(dispatch)}"
        )
    if dispatch not in DISPATCH_MODES:
        raise ValueError(
            f"stage({name!r}): dispatch={dispatch!r} is not a mode"
            f"{did_you_mean(dispatch, DISPATCH_MODES)}; use 'auto' or 'strict'"
        )
    if not isinstance(simulate, bool):
        raise TypeError(
            f"stage({name!r}): simulate must be True or False; got {_describe(simulate)}"
        )
    if simulate and device is None:
        raise ValueError(
            f"stage({name!r}): simulate=True simulates the pinned device, and no device= is "
            "given; name the device to simulate, such as device='nvidia.h100-sxm'"
        )
    desc: DeviceDescription | None = None
    if device is not None:
        if isinstance(device, DeviceDescription):
            desc = device
        elif isinstance(device, str):
            desc = default_library().get(device)  # UnknownDeviceError with close matches
        else:
            raise TypeError(
                f"stage({name!r}): device must be a device type such as 'nvidia.h100-sxm', a "
                f"family such as 'nvidia.hopper', or a DeviceDescription; got {_describe(device)}"
            )
    names: list[str]
    if preferred_backend is None:
        names = []
    elif isinstance(preferred_backend, str):
        names = [preferred_backend]
    elif isinstance(preferred_backend, Sequence) and not isinstance(
        preferred_backend, (bytes, bytearray)
    ):
        names = list(preferred_backend)
        if not names:
            raise ValueError(
                f"stage({name!r}): preferred_backend=[] names nothing; leave it out for "
                "automatic dispatch"
            )
        bad = next((n for n in names if not isinstance(n, str)), None)
        if bad is not None:
            raise TypeError(
                f"stage({name!r}): preferred_backend must hold names (strings); got "
                f"{_describe(bad)}"
            )
    else:
        raise TypeError(
            f"stage({name!r}): preferred_backend must be a name or a list of names such as "
            f"['torch', 'numpy']; got {_describe(preferred_backend)}"
        )
    prefs = tuple(_classify(name, n, desc is not None) for n in names)
    return Stage(name, prefs, desc, simulate, dispatch)
