"""Dispatch: pick the best eligible variant of an op for the scope in force, explain why,
fall back when one fails.

The way of a call (``Op.__call__``)::

    key = (scope, type and dtype of each array argument)
    plan = op._plans.get(key)                       # the hot path ends here
    on a miss: candidates = variants of the op
        - backend not installed / not available     (reason recorded)
        - no device in scope it drives and whose requirements it meets (reasons recorded)
        - dtype not accelerated by a device feature (reason recorded)
      ranked by (policy, -priority, -specificity, name) -> plan, cached
    per call, only for plans that need it: can_run checks, argument conversions (DLPack)
    on a backend failure in automatic mode: next candidate, warn once, record
"""

from __future__ import annotations

import logging
import operator
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prism_core._errors import PrismError, PrismWarning

if TYPE_CHECKING:
    from prism_core._description.device import DeviceDescription
    from prism_core._dispatch.ops import Op, Variant
    from prism_core._dispatch.scope import Scope
    from prism_core._knowledge.backend import Backend

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
    """Arguments a variant's backend does not take as they are, and how they move."""

    converters: tuple[tuple[int, Callable[[Any], Any]], ...] = ()
    sentences: tuple[str, ...] = ()


_NO_MOVES = Moves()


@dataclass(slots=True)  # slots: the hot path reads plan.fn on every call
class Plan:
    """The cached, static part of a decision for one (scope, signature)."""

    ranked: list[tuple[Variant, DeviceDescription | None, Backend | None]]
    rejected: list[Candidate]
    fn: Callable[..., Any] | None  # set when no per-call work is needed (the fast path)
    simulated: bool
    reference: Variant | None
    #: Per variant name (and "" for the reference run of a simulation): the arguments to move
    #: to the backend that executes it, and the sentences saying so.
    moves: dict[str, Moves] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)


_fallbacks: dict[tuple[str, str], FallbackRecord] = {}
_warned: set[tuple[str, str]] = set()
_lock = threading.Lock()
_availability: dict[str, Any] = {}
_present: list[Any] = []


def forget_host() -> None:
    """Drop what dispatch learnt about this host (present devices, backend availability) and
    every cached plan; called when plugins or the device library are loaded again."""
    from prism_core._dispatch.ops import _bump

    with _lock:
        _present.clear()
        _availability.clear()
    _bump()


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
    if not _present:
        from prism_core._knowledge.host import present_devices

        _present.append([d.description for d in present_devices().devices])
    devices: list[DeviceDescription] = _present[0]
    return devices


def _available(backend: Backend) -> Any:
    result = _availability.get(backend.name)
    if result is None:
        result = backend.availability()
        _availability[backend.name] = result
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


def _array_args(op: Op, args: Sequence[Any]) -> list[Any]:
    return [args[i] for i in _array_positions(op, args)]


def _rank(scope: Scope, variant: Variant) -> tuple[Any, ...]:
    policy = 0 if (scope.prefer != "reference" or variant.reference) else 1
    return (policy, -variant.priority, -variant.specificity, variant.name)


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
    backend = plugins().backends.get(variant.backend)
    if backend is None:
        return None, None, [f"backend {variant.backend!r} is not installed"]
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
    if backend is None or isinstance(value, ArraySpec):
        return True
    return backend.is_native(value)


def _build(op: Op, scope: Scope, args: Sequence[Any]) -> Plan:
    from prism_core._knowledge.plugins import plugins

    plugins()  # plugins' variants join their ops at discovery
    dtypes = _array_dtypes(op, args)
    accepted: list[tuple[tuple[Any, ...], Variant, DeviceDescription | None, Backend | None]] = []
    rejected: list[Candidate] = []
    for variant in op.variants:
        dev, backend, reasons = _judge(op, variant, scope, dtypes)
        if reasons:
            rejected.append(
                Candidate(
                    variant.name, variant.backend, False, None, tuple(reasons), (), variant.priority
                )
            )
        else:
            accepted.append((_rank(scope, variant), variant, dev, backend))
    accepted.sort(key=lambda item: item[0])
    ranked = [(v, d, b) for _, v, d, b in accepted]
    reference = next((v for v in op.variants if v.reference), None)
    plan = Plan(ranked, rejected, None, scope.simulated, reference)
    _finish(op, plan, args)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug(
            "dispatch %s in %r: %s (rejected: %s)",
            op.name,
            scope,
            ranked[0][0].name if ranked else "nothing eligible",
            "; ".join(f"{c.variant}: {', '.join(c.reasons)}" for c in rejected) or "none",
        )
    return plan


def _moves(op: Op, backend: Backend | None, args: Sequence[Any]) -> Moves:
    """What must move, through DLPack, for ``backend`` to take the call's arrays."""
    if backend is None:
        return _NO_MOVES
    converters = []
    sentences = []
    for i in _array_positions(op, args):
        if not _is_native(backend, args[i]):
            converters.append((i, backend.from_dlpack))
            sentences.append(
                f"argument {i}: {type(args[i]).__module__}.{type(args[i]).__name__} -> "
                f"{backend.name} through DLPack"
            )
    return Moves(tuple(converters), tuple(sentences)) if converters else _NO_MOVES


def _executor(plan: Plan, variant: Variant) -> Variant:
    """The variant that runs for a chosen one: itself, or the reference when simulating."""
    return plan.reference if (plan.simulated and plan.reference is not None) else variant


def _finish(op: Op, plan: Plan, args: Sequence[Any]) -> None:
    """Work out, per live candidate, what its backend needs moved; and the fast path: the first
    candidate's function when nothing per call is needed (no can_run, no move)."""
    from prism_core._knowledge.plugins import plugins

    backends = plugins().backends
    live = [(v, d, b) for v, d, b in plan.ranked if v.name not in plan.failed]
    plan.fn = None
    plan.moves = {}
    for variant, _dev, _backend in live:
        runner = _executor(plan, variant)
        plan.moves[variant.name] = _moves(op, backends.get(runner.backend), args)
    if plan.simulated and plan.reference is not None:
        # Nothing installed may run on the simulated device, or every candidate may decline
        # this call; simulation executes on the reference all the same (the decision says so).
        plan.moves[""] = _moves(op, backends.get(plan.reference.backend), args)
    if live:
        first = live[0][0]
        if first.can_run is None and not plan.moves[first.name].converters:
            plan.fn = _executor(plan, first).resolve()
    elif plan.simulated and plan.reference is not None and not plan.moves[""].converters:
        plan.fn = plan.reference.resolve()


# -- calling ----------------------------------------------------------------------------------


def _key(op: Op, scope_token: Any, args: Sequence[Any]) -> tuple[Any, ...]:
    """The cache key of a call; the hot path (``_ops._make_function``) builds the same inline."""
    parts: list[Any] = [scope_token]
    by_dtype = op._by_dtype[0]
    for a in _array_args(op, args):
        parts.append(type(a))
        if by_dtype:
            parts.append(getattr(a, "dtype", None))
    return tuple(parts)


def plan_for(op: Op, args: Sequence[Any], scope_token: Any, key: Any) -> Plan:
    from prism_core._dispatch.scope import current_scope

    plan: Plan | None = op._plans.get(key)
    if plan is None:
        plan = _build(op, current_scope(), args)
        if len(op._plans) > 4096:  # signatures are open-ended; keep the cache bounded
            op._plans.clear()
        op._plans[key] = plan
    return plan


def call_slow(op: Op, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Everything but the fast path: build the plan, per-call checks, conversions, fallback."""
    from prism_core._dispatch.scope import SCOPE

    plan = plan_for(op, args, SCOPE.get(), key)
    if plan.fn is not None:
        return _run(op, plan, plan.fn, None, args, kwargs)
    return _run_checked(op, plan, args, kwargs)


def _run_checked(op: Op, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    reasons = []
    for variant, _dev, _backend in plan.ranked:
        if variant.name in plan.failed:
            continue
        if variant.can_run is not None:
            verdict = variant.can_run(*args, **kwargs)
            if verdict is not True:
                reasons.append(f"{variant.name}: {verdict or 'can_run said no'}")
                continue
        # The arguments move for the backend of *this* variant (or the reference it stands for
        # in a simulation), not for the first-ranked one.
        moves = plan.moves.get(variant.name, _NO_MOVES)
        call_args = _convert(args, moves.converters) if moves.converters else args
        return _run(op, plan, _executor(plan, variant).resolve(), variant, call_args, kwargs)
    if plan.simulated and plan.reference is not None:
        moves = plan.moves.get("", _NO_MOVES)
        call_args = _convert(args, moves.converters) if moves.converters else args
        return _run(op, plan, plan.reference.resolve(), plan.reference, call_args, kwargs)
    raise _nothing_eligible(op, plan, reasons)


def _convert(
    args: tuple[Any, ...], converters: Sequence[tuple[int, Callable[[Any], Any]]]
) -> tuple[Any, ...]:
    out = list(args)
    for i, convert in converters:
        out[i] = convert(out[i])
    return tuple(out)


def _run(
    op: Op,
    plan: Plan,
    fn: Callable[..., Any],
    variant: Variant | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    try:
        return fn(*args, **kwargs)
    except CALLER_ERRORS:
        raise
    except Exception as exc:
        return failed(op, plan, exc, args, kwargs)


def failed(
    op: Op, plan: Plan, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """A variant raised a backend error: fall back (automatic mode) or raise (strict)."""
    from prism_core._dispatch.scope import current_scope

    if isinstance(exc, CALLER_ERRORS):
        raise exc
    live = [v for v, _, _ in plan.ranked if v.name not in plan.failed]
    variant = live[0] if live else None
    name = variant.name if variant else "?"
    scope = current_scope()
    if not scope.automatic:
        why = (
            "strict mode is on"
            if scope.strict
            else f"the backend {scope.backend!r} was named"
            if scope.backend
            else f"the device {scope.device.device_type!r} was named"
            if scope.device
            else "fallback is off"
        )
        raise BackendError(
            f"{op.name}: variant {name} failed: {type(exc).__name__}: {exc}; not falling back "
            f"because {why}"
        ) from exc
    plan.failed.add(name)
    _finish(op, plan, args)
    nxt = next((v.name for v, _, _ in plan.ranked if v.name not in plan.failed), None)
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
        warnings.warn(
            f"{op.name}: variant {name} failed ({type(exc).__name__}: {exc}); "
            + (f"falling back to {nxt}" if nxt else "no other variant is left"),
            FallbackWarning,
            stacklevel=4,
        )
    if nxt is None:
        raise DispatchError(
            f"{op.name}: every eligible variant failed; the last: {name}: {exc}"
        ) from exc
    if plan.fn is not None:
        return _run(op, plan, plan.fn, None, args, kwargs)
    return _run_checked(op, plan, args, kwargs)


def _nothing_eligible(op: Op, plan: Plan, per_call: list[str]) -> DispatchError:
    from prism_core._dispatch.scope import current_scope

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
    from prism_core._dispatch.ops import as_op
    from prism_core._dispatch.scope import SCOPE, current_scope

    the_op = as_op(op)
    key = _key(the_op, SCOPE.get(), args)
    from_cache = key in the_op._plans
    plan = plan_for(the_op, args, SCOPE.get(), key)
    scope = current_scope()
    candidates: list[Candidate] = []
    chosen: tuple[Variant, DeviceDescription | None, Backend | None] | None = None
    for variant, dev, _backend in plan.ranked:
        reasons: tuple[str, ...] = ()
        ok = True
        if variant.name in plan.failed:
            ok, reasons = False, ("failed earlier in this process (see prism_core.fallbacks())",)
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
                _rank(scope, variant),
                variant.priority,
            )
        )
    candidates.extend(plan.rejected)
    executed = None
    movement: tuple[str, ...] = ()
    if chosen is not None:
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
