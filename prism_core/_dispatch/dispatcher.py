"""Dispatch: pick the best eligible variant of an op for the scope in force, explain why,
fall back when one fails.

The way of a call (the op's function, made in ``ops.py``)::

    key = (scope, type and dtype of each array argument)
    plan = op._plans.get(key)                       # the hot path ends here:
        plan.fn(*args)                              #   nothing per call, or
        plan.check(*args) and plan.checked(*args)   #   a can_run, nothing else, or
        plan.call(*args)                            #   moves / fallback in progress
    on a miss: candidates = variants of the op
        - backend not installed / not available     (reason recorded)
        - no device in scope it drives and whose requirements it meets (reasons recorded)
        - dtype not accelerated by a device feature (reason recorded)
      ranked by (policy, data moves, -priority, -specificity, name) -> plan, cached if still
      current; in automatic mode a result computed away from the arguments' backend is
      brought back to it (NumPy in, NumPy out: docs/backends.md, "Where a call runs")
    on a backend failure in automatic mode: blame the variant that raised, record it, warn
    once at the caller's line, replace the cached plan by one without it, run the next
"""

from __future__ import annotations

import logging
import operator
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prism_core import _events as events
from prism_core._dispatch.registry import as_op, ensure_ready, generation, store_plan, swap_plan
from prism_core._dispatch.scope import SCOPE, current_scope
from prism_core._errors import PrismError, PrismWarning, did_you_mean, user_stacklevel
from prism_core._knowledge.threads import POOLS, entering
from prism_core._knowledge.variant import VariantImportError

if TYPE_CHECKING:
    from prism_core._description.device import DeviceDescription
    from prism_core._dispatch.registry import Op
    from prism_core._dispatch.scope import Scope
    from prism_core._knowledge.backend import Backend
    from prism_core._knowledge.variant import Variant

__all__ = [
    "ArraySpec",
    "BackendError",
    "Candidate",
    "Decision",
    "DispatchError",
    "FallbackRecord",
    "FallbackWarning",
    "explain",
    "fallbacks",
]

logger = logging.getLogger("prism_core")

#: Exceptions that are the caller's (a shape mismatch, a wrong dtype): they reach the caller
#: unchanged and never cause a fallback.
CALLER_ERRORS: tuple[type[BaseException], ...] = (
    TypeError,
    ValueError,
    IndexError,
    KeyError,
    ArithmeticError,
    # A warning raised as an error (`-W error`, pytest's filterwarnings) is the caller's too.
    Warning,
)


class DispatchError(PrismError, RuntimeError):
    """No variant could run the call; the message lists every candidate's reason."""

    __module__ = "prism_core"


class BackendError(PrismError, RuntimeError):
    """A variant failed for a backend reason where falling back is not allowed (a device or
    backend was named, or strict mode); the original error is its ``__cause__``."""

    __module__ = "prism_core"


class FallbackWarning(PrismWarning):
    """A variant failed and dispatch fell back to the next candidate (warned once each)."""

    __module__ = "prism_core"


def _shape(shape: Any) -> tuple[int, ...]:
    """``shape`` as a tuple of ints; a TypeError or ValueError naming what is wrong with it."""
    wanted = "ArraySpec(): shape must be a sequence of non-negative integers such as (4096, 4096)"
    if isinstance(shape, (str, bytes, bytearray)) or not isinstance(shape, Sequence):
        raise TypeError(f"{wanted}; got {shape!r} ({type(shape).__name__})")
    dims = []
    for i, d in enumerate(shape):
        try:
            if isinstance(d, bool):
                raise TypeError
            dim = operator.index(d)
        except TypeError:
            raise TypeError(f"{wanted}; dimension {i} is {d!r} ({type(d).__name__})") from None
        if dim < 0:
            raise ValueError(f"{wanted}; dimension {i} is {dim}")
        dims.append(dim)
    return tuple(dims)


class ArraySpec:
    """An array described by its shape and dtype, for :func:`explain` without data.

    ``dtype`` is what a NumPy array of that type has, a ``numpy.dtype``, so that a variant's
    ``can_run`` gives a spec the verdict it gives the array; for the types NumPy lacks
    (bfloat16) it is Prism's :class:`DType`.
    """

    __module__ = "prism_core"
    __slots__ = ("dtype", "shape")

    def __init__(self, shape: Sequence[int], dtype: Any = "float64") -> None:
        from prism_core._description.dtypes import dtype as to_dtype

        self.shape = _shape(shape)
        prism_dtype = to_dtype(dtype)
        numpy_dtype = prism_dtype.numpy
        self.dtype: Any = prism_dtype if numpy_dtype is None else numpy_dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __repr__(self) -> str:
        from prism_core._description.dtypes import dtype as to_dtype

        return f"ArraySpec({self.shape}, {to_dtype(self.dtype).name})"


@dataclass(frozen=True)
class Candidate:
    """One variant's verdict in a decision."""

    variant: str
    backend: str
    accepted: bool
    device: str | None = None
    reasons: tuple[str, ...] = ()
    rank: tuple[Any, ...] = ()
    priority: int = 0

    __module__ = "prism_core"

    def as_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "backend": self.backend,
            "accepted": self.accepted,
            "device": self.device,
            "priority": self.priority,
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class Decision:
    """Why a call runs where it runs: every candidate, accepted or rejected with its reasons."""

    op: str
    scope: dict[str, Any]
    candidates: tuple[Candidate, ...]
    chosen: str | None
    chosen_backend: str | None = None
    chosen_device: str | None = None
    executed: str | None = None
    from_cache: bool = False
    simulated: bool = False
    data_movement: tuple[str, ...] = ()
    signature: tuple[str, ...] = ()

    __module__ = "prism_core"

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "scope": self.scope,
            "signature": list(self.signature),
            "chosen": self.chosen,
            "chosen_backend": self.chosen_backend,
            "chosen_device": self.chosen_device,
            "executed": self.executed,
            "simulated": self.simulated,
            "from_cache": self.from_cache,
            "data_movement": list(self.data_movement),
            "candidates": [c.as_dict() for c in self.candidates],
        }

    def __str__(self) -> str:
        lines = [f"{self.op}({', '.join(self.signature)})"]
        scope = self.scope
        where = scope.get("device") or "automatic"
        if scope.get("simulated"):
            where += " (simulated)"
        lines.append(
            f"  scope: device {where}, backend {scope.get('backend') or 'any'}, "
            f"prefer {scope.get('prefer')}{', strict' if scope.get('strict') else ''}"
        )
        if self.chosen:
            lines.append(
                f"  chosen: {self.chosen} on {self.chosen_backend}"
                + (f" for {self.chosen_device}" if self.chosen_device else "")
                + (" (from cache)" if self.from_cache else "")
            )
        else:
            lines.append("  chosen: none: no installed variant can run here")
        if self.simulated and self.executed:
            lines.append(f"  executes: {self.executed} (the device is simulated)")
        for move in self.data_movement:
            lines.append(f"  moves: {move}")
        lines.append("  candidates:")
        for c in self.candidates:
            mark = "+" if c.accepted else "-"
            detail = f" on {c.device}" if c.device else ""
            why = f": {'; '.join(c.reasons)}" if c.reasons else ""
            lines.append(
                f"    {mark} {c.variant} [{c.backend}, priority {c.priority}]{detail}{why}"
            )
        return "\n".join(lines)


@dataclass
class FallbackRecord:
    """A variant that failed for a backend reason, and what ran instead."""

    op: str
    variant: str
    error: str
    fell_back_to: str | None
    count: int = 1

    __module__ = "prism_core"


@dataclass(frozen=True)
class Moves:
    """Arguments a variant's backend does not take as they are, how they move, and how the
    result comes back (automatic mode: to the backend the arguments came from)."""

    converters: tuple[tuple[int, Callable[[Any], Any]], ...] = ()
    sentences: tuple[str, ...] = ()
    result: Callable[[Any], Any] | None = None


_NO_MOVES = Moves()


def _unfinished(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a plan was used before _finish() set how it runs")


@dataclass(slots=True)  # slots: the hot path reads plan.fn on every call
class Plan:
    """The cached decision for one (scope, signature).  Never changed once cached: a failure
    makes a new plan that replaces it (``_record_failure``), so that a thread always reads a
    function and the variant it belongs to from one consistent object."""

    ranked: tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...]
    rejected: tuple[Candidate, ...]
    simulated: bool
    reference: Variant | None
    #: Per variant name (and "" for the reference run of a simulation): the arguments to move
    #: to the backend that executes it, and the sentences saying so.
    moves: dict[str, Moves]
    #: The dispatch generation the plan was built at (``registry.store_plan``).
    generation: int
    failed: frozenset[str] = frozenset()
    #: The fast path: the function of ``first``, called directly by the op's function, when
    #: ``first`` needs nothing per call (no can_run, no move).  A failure of it is ``first``'s.
    fn: Callable[..., Any] | None = None
    first: Variant | None = None
    #: The checked fast path: ``first`` has a ``can_run`` (``check``) and needs nothing else
    #: per call; the op's function calls ``check``, then ``checked`` (``first``'s function).
    checked: Callable[..., Any] | None = None
    check: Callable[..., Any] | None = None
    #: The backend whose function ``fn`` or ``checked`` is (the executor's): the hot path tells
    #: the thread-pool coordinator when it differs from the backend that ran last.
    backend: str = ""
    #: Everything else: ``call(*args, **kwargs)`` runs the call (per-call checks, moves,
    #: fallback) and handles its own failures.
    call: Callable[..., Any] = field(default=_unfinished)


_fallbacks: dict[tuple[str, str], FallbackRecord] = {}
_warned: set[tuple[str, str]] = set()
_lock = threading.Lock()
#: What dispatch learnt about this host, with the ``_events`` generation it is valid for.
_availability: dict[str, tuple[int, Any]] = {}
_present: list[tuple[int, list[DeviceDescription]]] = []


def fallbacks() -> list[FallbackRecord]:
    """Every fallback so far in this process (one record per op and failing variant)."""
    with _lock:
        return list(_fallbacks.values())


def reset_fallbacks() -> None:
    with _lock:
        _fallbacks.clear()
        _warned.clear()


# -- building plans ---------------------------------------------------------------------------


def _devices_in_scope(scope: Scope) -> list[DeviceDescription]:
    if scope.device is not None:
        return [scope.device]
    now = events.generation()
    cached = _present[0] if _present else None
    if cached is not None and cached[0] == now:
        return cached[1]
    from prism_core._knowledge.host import present_devices

    devices = [d.description for d in present_devices().devices]
    with _lock:
        _present[:] = [(now, devices)]
    return devices


def _available(backend: Backend) -> Any:
    now = events.generation()
    cached = _availability.get(backend.name)
    if cached is not None and cached[0] == now:
        return cached[1]
    result = backend.availability()
    _availability[backend.name] = (now, result)
    return result


def _array_dtypes(op: Op, args: Sequence[Any]) -> list[str]:
    from prism_core._description.dtypes import dtype as to_dtype

    out = []
    for a in _array_args(op, args):
        dt = getattr(a, "dtype", None)
        if dt is None:
            continue
        try:
            out.append(to_dtype(dt).vocab)
        except (TypeError, ValueError):
            out.append(str(dt))
    return out


def _array_positions(op: Op, args: Sequence[Any]) -> tuple[int, ...]:
    """Which positional arguments of this call are arrays (``Op.array_args``, else by duck)."""
    if op.array_args is None:
        return tuple(
            i for i, a in enumerate(args) if hasattr(a, "dtype") or hasattr(a, "__dlpack__")
        )
    return tuple(i for i in op.array_args if i < len(args))


def _is_sequence(op: Op, i: int, value: Any) -> bool:
    return i in op.sequences and isinstance(value, (list, tuple))


def _array_args(op: Op, args: Sequence[Any]) -> list[Any]:
    """The call's arrays: its array arguments, and the items of its sequences of arrays."""
    out: list[Any] = []
    for i in _array_positions(op, args):
        if _is_sequence(op, i, args[i]):
            out.extend(args[i])
        else:
            out.append(args[i])
    return out


def _rank(scope: Scope, variant: Variant, moves: int = 0) -> tuple[Any, ...]:
    """The sort key of an eligible variant: the policy, then (data stays where it is) whether
    it must move the call's data, then priority, specificity and name."""
    policy = 0 if (scope.prefer != "reference" or variant.reference) else 1
    return (policy, moves, -variant.priority, -variant.specificity, variant.name)


def _home(op: Op, args: Sequence[Any], reference: Variant | None) -> Backend | None:
    """The backend the call's data belongs to: the owner of the first array that is not the
    reference backend's (a torch tensor among NumPy arrays), else the reference backend (NumPy
    arrays, scalars, or no arrays at all: creation ops)."""
    from prism_core._knowledge.plugins import plugins

    ps = plugins()
    ref = ps.backends.get(reference.backend) if reference is not None else None
    for a in _array_args(op, args):
        if isinstance(a, ArraySpec):
            continue
        owner = ps.owner(a)
        if owner is not None and owner is not ref:
            return owner
    return ref


def _judge(
    op: Op, variant: Variant, scope: Scope, dtypes: list[str]
) -> tuple[DeviceDescription | None, Backend | None, list[str]]:
    """The device a variant would run on, its backend, or the reasons it cannot run."""
    from prism_core._knowledge.plugins import plugins

    if scope.backend is not None and variant.backend != scope.backend:
        return (
            None,
            None,
            [f"backend {variant.backend!r} is not the one in scope ({scope.backend!r})"],
        )
    installed = plugins().backends
    backend = installed.get(variant.backend)
    if backend is None:
        return (
            None,
            None,
            [
                f"backend {variant.backend!r} is not installed"
                f"{did_you_mean(variant.backend, installed)}"
            ],
        )
    if not scope.simulated:
        availability = _available(backend)
        if not availability:
            return (
                None,
                backend,
                [f"backend {variant.backend!r} is not available: {availability.reason}"],
            )
    reasons: list[str] = []
    for dev in _devices_in_scope(scope):
        drive = backend.can_drive(dev)
        if not drive:
            reasons.append(
                f"{variant.backend!r} does not drive {dev.device_type} ({drive.explain()})"
            )
            continue
        match = variant.requirement.match(dev)
        if not match:
            reasons.extend(f"{dev.device_type}: {r}" for r in match.reasons)
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
    return None, backend, reasons


def _is_native(backend: Backend | None, value: Any) -> bool:
    if backend is None:
        return True
    if isinstance(value, ArraySpec):
        # A described array stands for a NumPy array, the arrays a caller starts with: the
        # decision (and the moves it shows) is the one a call with NumPy arrays gets.
        return backend.is_native(_HOST_STAND_IN[0] if _HOST_STAND_IN else _stand_in())
    return backend.is_native(value)


_HOST_STAND_IN: list[Any] = []


def _stand_in() -> Any:
    import numpy as np

    _HOST_STAND_IN[:] = [np.empty(0)]
    return _HOST_STAND_IN[0]


def _build(op: Op, key: Any, scope: Scope, args: Sequence[Any], built_at: int) -> Plan:
    from prism_core._knowledge.plugins import plugins

    dtypes = _array_dtypes(op, args)
    accepted: list[tuple[tuple[Any, ...], Variant, DeviceDescription | None, Backend | None]] = []
    rejected: list[Candidate] = []
    for variant in list(op.variants):
        dev, backend, reasons = _judge(op, variant, scope, dtypes)
        if reasons:
            rejected.append(
                Candidate(
                    variant.name, variant.backend, False, None, tuple(reasons), (), variant.priority
                )
            )
        else:
            accepted.append((_rank(scope, variant), variant, dev, backend))
    reference = next((v for v in op.variants if v.reference), None)
    backends = plugins().backends
    home = _home(op, args, reference)
    # Where data lives, it stays (docs/backends.md): a variant whose backend takes every array
    # as it is ranks before one that must move them.  Without arrays (creation ops), automatic
    # mode makes the reference backend's arrays.
    has_arrays = bool(_array_args(op, args))
    ranking = []
    for rank, variant, dev, backend in accepted:
        own = _moves(op, backend, dev, args, None)
        stays = not own.converters and (
            has_arrays or scope.backend is not None or home is None or variant.backend == home.name
        )
        ranking.append(((rank[0], 0 if stays else 1, *rank[2:]), variant, dev, backend))
    ranking.sort(key=lambda item: item[0])
    ranked = tuple((v, d, b) for _, v, d, b in ranking)
    # A result made away from the arguments' backend goes back to it, unless the caller named
    # a backend or a device (then results are that backend's arrays).
    back = home if (scope.backend is None and scope.device is None) else None
    moves: dict[str, Moves] = {}
    for variant, dev, _backend in ranked:
        runner = reference if (scope.simulated and reference is not None) else variant
        moves[variant.name] = _moves(op, backends.get(runner.backend), dev, args, back)
    if scope.simulated and reference is not None:
        # Nothing installed may run on the simulated device, or every candidate may decline
        # this call; simulation executes on the reference all the same (the decision says so).
        moves[""] = _moves(op, backends.get(reference.backend), None, args, back)
    plan = Plan(ranked, tuple(rejected), scope.simulated, reference, moves, built_at)
    _finish(op, key, plan)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug(
            "dispatch %s in %r: %s (rejected: %s)",
            op.name,
            scope,
            ranked[0][0].name if ranked else "nothing eligible",
            "; ".join(f"{c.variant}: {', '.join(c.reasons)}" for c in rejected) or "none",
        )
    return plan


def _moves(
    op: Op,
    backend: Backend | None,
    device: DeviceDescription | None,
    args: Sequence[Any],
    home: Backend | None,
) -> Moves:
    """What must move for ``backend`` to take the call's arrays on ``device``, what that
    costs, and how the result goes back to ``home`` (``None``: it stays the backend's)."""
    if backend is None:
        return _NO_MOVES
    from prism_core._dispatch import movement
    from prism_core._knowledge.plugins import plugins

    ps = plugins()
    converters: list[tuple[int, Callable[[Any], Any]]] = []
    sentences: list[str] = []
    for i in _array_positions(op, args):
        value = args[i]
        items = list(value) if _is_sequence(op, i, value) else [value]
        foreign = [a for a in items if not _is_native(backend, a)]
        if not foreign:
            continue
        move = movement.mover(backend, device, ps.owner, reference=_reference_backend(op, ps))
        converters.append((i, movement.each(move) if _is_sequence(op, i, value) else move))
        sentences.extend(movement.describe(i, a, ps.owner(a), backend, device) for a in foreign)
    if not converters:
        return _NO_MOVES
    result = None
    if home is not None and home is not backend:
        result = movement.bring_back(backend, home, _reference_backend(op, ps))
        sentences.append(f"result: {backend.name} -> {home.name} (the arguments' backend)")
    return Moves(tuple(converters), tuple(sentences), result)


def _reference_backend(op: Op, ps: Any) -> Backend | None:
    reference = next((v for v in op.variants if v.reference), None)
    return ps.backends.get(reference.backend) if reference is not None else None


def _executor(plan: Plan, variant: Variant) -> Variant:
    """The variant that runs for a chosen one: itself, or the reference when simulating."""
    return plan.reference if (plan.simulated and plan.reference is not None) else variant


def _resolved(variant: Variant) -> Callable[..., Any] | None:
    """The variant's function if it can be had now, else ``None`` (the call then goes the
    checked way, where an import failure is that variant's failure)."""
    try:
        return variant.resolve()
    except VariantImportError:
        return None


def _finish(op: Op, key: Any, plan: Plan) -> None:
    """The ways this plan runs a call: the fast path (``fn``: the first live candidate's
    function, when it needs nothing per call), the checked fast path (``check``, the first
    candidate's ``can_run``, then ``checked``, its function), or the general checked way
    (``call``)."""
    live = [v for v, _, _ in plan.ranked if v.name not in plan.failed]
    plan.fn = plan.first = plan.checked = plan.check = None
    plan.backend = ""
    for _v, _d, backend in plan.ranked:  # each backend's thread modules, once per plan
        if backend is not None and backend.thread_modules:
            POOLS.adopt(backend.name, backend.thread_modules)

    def run(*args: Any, **kwargs: Any) -> Any:
        return run_checked(op, key, plan, args, kwargs)

    plan.call = run
    if live:
        first = live[0]
        if plan.moves[first.name].converters:
            return
        fn = _resolved(_executor(plan, first))
        if fn is None:
            return
        if first.can_run is None:
            plan.fn, plan.first = fn, first
        elif not plan.simulated:
            plan.checked, plan.check, plan.first = fn, first.can_run, first
        plan.backend = _executor(plan, first).backend
    elif plan.simulated and plan.reference is not None and not plan.moves[""].converters:
        fn = _resolved(plan.reference)
        if fn is not None:
            plan.fn, plan.first = fn, plan.reference
            plan.backend = plan.reference.backend


def _derive(op: Op, key: Any, plan: Plan, failed: frozenset[str]) -> Plan:
    new = Plan(
        plan.ranked, plan.rejected, plan.simulated, plan.reference, plan.moves, plan.generation
    )
    new.failed = failed
    _finish(op, key, new)
    return new


# -- calling ----------------------------------------------------------------------------------


def _key(op: Op, scope_token: Any, args: Sequence[Any]) -> tuple[Any, ...]:
    """The cache key of a call; the hot path (``ops._make_function``) builds the same inline."""
    parts: list[Any] = [scope_token]
    by_dtype = op._by_dtype[0]
    for a in _array_args(op, args):
        parts.append(type(a))
        if by_dtype:
            parts.append(getattr(a, "dtype", None))
    return tuple(parts)


def plan_for(op: Op, key: Any, args: Sequence[Any]) -> Plan:
    """The cached plan for ``key``, or a new one (stored only if nothing it was built from
    changed meanwhile: issue 7, item 3)."""
    plan: Plan | None = op._plans.get(key)
    if plan is None:
        ensure_ready()  # plugins' variants join their ops (may advance the generation)
        built_at = generation()  # read before anything the plan is built from
        plan = _build(op, key, current_scope(), args, built_at)
        store_plan(op, key, plan, built_at)
    return plan


def call_slow(op: Op, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A call without a cached plan: build one, then run it."""
    plan = plan_for(op, key, args)
    fn = plan.fn
    if fn is not None:
        entering(plan.backend)
        try:
            return fn(*args, **kwargs)
        except CALLER_ERRORS:
            raise
        except Exception as exc:
            return failed(op, key, plan, exc, args, kwargs)
    return plan.call(*args, **kwargs)


def declined(
    op: Op, key: Any, plan: Plan, verdict: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """The checked fast path's ``can_run`` declined this call: the next candidates decide."""
    variant = plan.first
    assert variant is not None  # set together with checked
    why = f"{variant.name}: {verdict or 'can_run said no'}"
    return run_checked(op, key, plan, args, kwargs, (variant.name,), [why])


def failed(
    op: Op, key: Any, plan: Plan, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """A fast path's function (``plan.fn`` or ``plan.checked``, both ``plan.first``'s) raised:
    record it, then go on with the next candidate (automatic mode) or raise."""
    variant = plan.first
    assert variant is not None  # fn is set together with first
    current = _record_failure(op, key, plan, variant, exc)
    return run_checked(op, key, current, args, kwargs, (variant.name,), [], exc)


def run_checked(
    op: Op,
    key: Any,
    plan: Plan,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    tried: Sequence[str] = (),
    reasons: list[str] | None = None,
    error: Exception | None = None,
) -> Any:
    """Run the call on the best candidate that accepts it: per-call checks, moves, fallback.

    Each variant runs at most once per call (``tried``); a failure is blamed on the variant
    that raised and on no other (issue 7, items 1 and 2).
    """
    done = set(tried)
    declined = list(reasons or ())
    while True:
        for variant, _dev, _backend in plan.ranked:
            name = variant.name
            if name in done or name in plan.failed:
                continue
            done.add(name)
            if variant.can_run is not None:
                verdict = variant.can_run(*args, **kwargs)
                if verdict is not True:
                    declined.append(f"{name}: {verdict or 'can_run said no'}")
                    continue
            try:
                executor = _executor(plan, variant)
                fn = executor.resolve()
                entering(executor.backend)
                moves = plan.moves.get(name, _NO_MOVES)
                if not moves.converters:
                    return fn(*args, **kwargs)
                out = fn(*_convert(args, moves.converters), **kwargs)
                return out if moves.result is None else moves.result(out)
            except CALLER_ERRORS:
                raise
            except Exception as exc:
                plan = _record_failure(op, key, plan, variant, exc)
                error = exc
                break
        else:
            break
    if error is not None:
        raise DispatchError(
            f"{op.name}: every eligible variant failed; the last: {type(error).__name__}: "
            f"{error}" + "".join(f"\n  {r}" for r in declined)
        ) from error
    if plan.simulated and plan.reference is not None:
        moves = plan.moves.get("", _NO_MOVES)
        entering(plan.reference.backend)
        if not moves.converters:
            return plan.reference.resolve()(*args, **kwargs)
        out = plan.reference.resolve()(*_convert(args, moves.converters), **kwargs)
        return out if moves.result is None else moves.result(out)
    raise _nothing_eligible(op, plan, declined)


def _convert(
    args: tuple[Any, ...], converters: Sequence[tuple[int, Callable[[Any], Any]]]
) -> tuple[Any, ...]:
    out = list(args)
    for i, convert in converters:
        out[i] = convert(out[i])
    return tuple(out)


def _record_failure(op: Op, key: Any, plan: Plan, variant: Variant, exc: Exception) -> Plan:
    """``variant`` raised a backend error: raise (a device or backend was named, strict mode,
    or a simulation, which runs the reference and has nothing to fall back to); else record it
    once with its count, warn once at the caller's line, and return the plan without it."""
    name = variant.name
    scope = current_scope()
    what = (
        str(exc)
        if isinstance(exc, VariantImportError)
        else f"variant {name} failed: {type(exc).__name__}: {exc}"
    )
    if isinstance(exc, VariantImportError):
        _note_plugin_problem(variant, str(exc))
    if not scope.automatic or plan.simulated:
        why = (
            "strict mode is on"
            if scope.strict
            else f"the backend {scope.backend!r} was named"
            if scope.backend
            else f"the device {scope.device.device_type!r} was named"
            if scope.device and not scope.simulated
            else "a simulated call runs the reference, and nothing else can stand in for it"
            if plan.simulated
            else "fallback is off"
        )
        raise BackendError(f"{op.name}: {what}; not falling back because {why}") from exc
    new = _without(op, key, plan, name)
    nxt = next((v.name for v, _, _ in new.ranked if v.name not in new.failed), None)
    with _lock:
        record = _fallbacks.get((op.name, name))
        if record is None:
            _fallbacks[(op.name, name)] = FallbackRecord(
                op.name, name, f"{type(exc).__name__}: {exc}", nxt
            )
        else:
            record.count += 1
        first = (op.name, name) not in _warned
        _warned.add((op.name, name))
    if first:
        said = (
            str(exc)
            if isinstance(exc, VariantImportError)
            else f"variant {name} failed ({type(exc).__name__}: {exc})"
        )
        warnings.warn(
            f"{op.name}: {said}; "
            + (f"falling back to {nxt}" if nxt else "no other variant is left"),
            FallbackWarning,
            stacklevel=user_stacklevel(),
        )
    return new


def _without(op: Op, key: Any, plan: Plan, name: str) -> Plan:
    """The plan in force for ``key`` with ``name`` failed, installed in the cache.

    Threads that see the same failure at once agree on one plan: each derives from what the
    cache holds and swaps only if nobody changed it meanwhile (the derivation may import a
    variant's module, so it is not done under the lock).
    """
    while True:
        current = op._plans.get(key)
        base = current if current is not None and current.generation == plan.generation else plan
        if name in base.failed:
            return base
        new = _derive(op, key, base, base.failed | {name})
        if swap_plan(op, key, current, new):
            return new


def _note_plugin_problem(variant: Variant, problem: str) -> None:
    if not variant.source.startswith("plugin:"):
        return
    from prism_core._knowledge.plugins import plugins

    record = plugins().records.get(variant.source.partition(":")[2])
    if record is not None and problem not in record.problems:
        record.problems.append(problem)


def _nothing_eligible(op: Op, plan: Plan, per_call: list[str]) -> DispatchError:
    lines = [f"no variant of {op.name} can run in {current_scope()!r}:"]
    lines.extend(f"  {c.variant}: {'; '.join(c.reasons)}" for c in plan.rejected)
    lines.extend(f"  {r}" for r in per_call)
    lines.extend(f"  {v} failed earlier" for v in sorted(plan.failed))
    return DispatchError("\n".join(lines))


# -- explain ----------------------------------------------------------------------------------


def _signature_text(op: Op, args: Sequence[Any]) -> tuple[str, ...]:
    out = []
    for a in args:
        if isinstance(a, ArraySpec):
            out.append(f"{a.dtype.name}[{'x'.join(map(str, a.shape))}]")
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            out.append(f"{type(a).__name__} {a.dtype}[{'x'.join(map(str, a.shape))}]")
        else:
            out.append(type(a).__name__)
    return tuple(out)


def explain(op: Any, *args: Any, **kwargs: Any) -> Decision:
    """The decision ``op(*args, **kwargs)`` gets in the scope in force, without running it.

    Arguments may be real arrays or :class:`ArraySpec` (shape and dtype only).
    """
    the_op = as_op(op)
    key = _key(the_op, SCOPE.get(), args)
    from_cache = key in the_op._plans
    plan = plan_for(the_op, key, args)
    scope = current_scope()
    candidates: list[Candidate] = []
    chosen: tuple[Variant, DeviceDescription | None, Backend | None] | None = None
    for variant, dev, _backend in plan.ranked:
        reasons: tuple[str, ...] = ()
        ok = True
        problem = variant.import_problem()
        if variant.name in plan.failed:
            ok, reasons = False, ("failed earlier in this process (see prism_core.fallbacks())",)
        elif problem:
            ok, reasons = False, (f"{variant.origin}: {problem}",)
        elif variant.can_run is not None:
            verdict = variant.can_run(*args, **kwargs)
            if verdict is not True:
                ok, reasons = False, (f"can_run: {verdict or 'no'}",)
        if ok and chosen is None:
            chosen = (variant, dev, _backend)
        candidates.append(
            Candidate(
                variant.name,
                variant.backend,
                ok,
                dev.device_type if dev else None,
                reasons,
                _rank(
                    scope, variant, 1 if plan.moves.get(variant.name, _NO_MOVES).converters else 0
                ),
                variant.priority,
            )
        )
    candidates.extend(plan.rejected)
    executed = None
    movement: tuple[str, ...] = ()
    if chosen is not None and plan.simulated:
        # What the chosen variant would move on the device, not what the reference that
        # stands in for it moves on the host.
        movement = _moves(the_op, chosen[2], chosen[1], args, None).sentences
    elif chosen is not None:
        movement = plan.moves.get(chosen[0].name, _NO_MOVES).sentences
    elif plan.simulated:
        movement = plan.moves.get("", _NO_MOVES).sentences
    if plan.simulated and plan.reference is not None:
        executed = plan.reference.name
    elif chosen is not None:
        executed = chosen[0].name
    return Decision(
        op=the_op.name,
        scope=scope.as_dict(),
        candidates=tuple(candidates),
        chosen=chosen[0].name if chosen else None,
        chosen_backend=chosen[0].backend if chosen else None,
        chosen_device=chosen[1].device_type if chosen and chosen[1] else None,
        executed=executed,
        from_cache=from_cache,
        simulated=plan.simulated,
        data_movement=movement,
        signature=_signature_text(the_op, args),
    )
