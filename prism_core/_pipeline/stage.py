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
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core._pipeline.placement import (
    Placement,
    _classify,
    _Preference,
    override_placement,
    pinned_placement,
    preferred_placement,
)
from prism_core._pipeline.report import PipelineError, StageFallback, StageReport
from prism_core._pipeline.split import recording as split_recording
from prism_core.kernel.dispatch import movement
from prism_core.kernel.dispatch import scope as _scope_module
from prism_core.kernel.dispatch.fallback import BackendError, FallbackWarning, fallback_recording
from prism_core.kernel.dispatch.interception import LENIENT
from prism_core.kernel.dispatch.scope import SCOPE, ScopeBlock
from prism_core.kernel.errors import describe_exception, did_you_mean, user_stacklevel
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.contract.extension_points import OpLike
    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.dispatch.scope import Scope

__all__ = [
    "DISPATCH_MODES",
    "OVERRIDE_KEYS",
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


# -- hosts: the run or plan a stage reports to -------------------------------------------------


class StageHost:
    """What stages report to while a pipeline runs or is planned (``pipeline.py`` and
    ``planner.py`` subclass it); in force through a context variable, so each thread or task has
    its own.

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
        self, op: OpLike, args: tuple[Any, ...], kwargs: dict[str, Any], error: Exception
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
            return override_placement(override, self.dispatch)
        if self.device is not None:
            return pinned_placement(
                self.name, self.device, self.simulate, self.preferences, self.dispatch
            )
        return preferred_placement(self.name, self.preferences, self.dispatch)

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
