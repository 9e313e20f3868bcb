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

import contextlib
import contextvars
import operator
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from prism_core import _events as events
from prism_core._contract.variant import VariantImportError
from prism_core._dispatch.decision import Basis, Candidate, Decision
from prism_core._dispatch.registry import (
    as_op,
    ensure_ready,
    generation,
    size_keyed,
    store_plan,
    swap_plan,
)
from prism_core._dispatch.scope import SCOPE, current_scope
from prism_core._errors import (
    PrismError,
    PrismWarning,
    describe_exception,
    did_you_mean,
    user_stacklevel,
)
from prism_core._knowledge.threads import POOLS, entering

if TYPE_CHECKING:
    from prism_core._contract.backend import Backend
    from prism_core._contract.variant import Variant
    from prism_core._description.device import DeviceDescription
    from prism_core._dispatch.registry import Op
    from prism_core._dispatch.scope import Scope

__all__ = [
    "ArraySpec",
    "BackendError",
    "DispatchError",
    "FallbackRecord",
    "FallbackWarning",
    "explain",
    "fallbacks",
]


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
    #: What ordered the candidates: measured times, predicted times or declared priority.
    basis: Basis = field(default_factory=Basis)
    #: Tuned times could order this plan's candidates, but none were measured for the call
    #: (tuning on first use, when on, measures them: ``first_use``).
    untuned: bool = False


_fallbacks: dict[tuple[str, str], FallbackRecord] = {}
_warned: set[tuple[str, str]] = set()
_lock = threading.Lock()
#: What dispatch learnt about this host, with the ``_events`` generation it is valid for.
_availability: dict[str, tuple[int, Any]] = {}
_present: list[tuple[int, list[DeviceDescription]]] = []


#: Hooks that the pipeline layer (``prism_core._pipeline``) puts in force in a context; dispatch
#: never imports it, and reads them only off the hot path (a cache miss, a failure):
#:
#: ``PLANNING``: while a pipeline is planned (``explain``), called as ``hook(op, args, kwargs)``
#: by a call that has no cached plan, instead of running it; returns what stands for the result
#: (``ArraySpec``).  Planning puts in force scopes no plan is keyed by, so every call misses.
#:
#: ``LENIENT``: while a stage with a preferred placement runs in automatic mode, called as
#: ``hook(op, args, kwargs, error)`` when the placement in scope cannot run a call (no variant
#: there: ``DispatchError``; its variant failed: ``BackendError``); returns the result of the
#: call run elsewhere, or raises ``error``.
PLANNING: contextvars.ContextVar[Callable[..., Any] | None] = contextvars.ContextVar(
    "prism_planning", default=None
)
LENIENT: contextvars.ContextVar[Callable[..., Any] | None] = contextvars.ContextVar(
    "prism_lenient", default=None
)
#: The list :func:`fallback_recording` appends to in this context (``None``: nothing records).
_FALLBACK_SINK: contextvars.ContextVar[list[FallbackRecord] | None] = contextvars.ContextVar(
    "prism_fallback_recording", default=None
)


@contextlib.contextmanager
def fallback_recording() -> Iterator[list[FallbackRecord]]:
    """Record the fallbacks that happen in this context: yields a list to which each fallback
    appends a :class:`FallbackRecord` of its own (``count`` 1), beside the process-wide
    records of :func:`fallbacks`.  The innermost recording gets them."""
    sink: list[FallbackRecord] = []
    token = _FALLBACK_SINK.set(sink)
    try:
        yield sink
    finally:
        with contextlib.suppress(ValueError):  # ended in another context: not ours to reset
            _FALLBACK_SINK.reset(token)


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


def _known(backend: Backend) -> bool:
    """Whether this backend's availability is known (asked since the last reload)."""
    cached = _availability.get(backend.name)
    return cached is not None and cached[0] == events.generation()


def _unavailable(backend: Backend | None) -> str | None:
    """Why ``backend`` cannot run here (asking it now, which may import its framework)."""
    if backend is None:
        return None
    availability = _available(backend)
    if availability:
        return None
    return f"backend {backend.name!r} is not available: {availability.reason}"


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


def tuning_dtype(dtypes: Sequence[str]) -> str | None:
    """What tuned times are keyed by: the arrays' one dtype; for arrays of several dtypes (an
    alignment's uint8 codes, int64 offsets and int32 matrix) their dtypes in argument
    order joined by commas; ``None`` without arrays."""
    if not dtypes:
        return None
    return dtypes[0] if len(set(dtypes)) == 1 else ",".join(dtypes)


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


#: The way out of Prism to NumPy: its result is a NumPy array whatever the argument's backend
#: and the scope (docs/backends.md, "Where a call runs"); the reference runs it wherever no
#: variant of the argument's backend does.
WAY_OUT = "to_numpy"


def _judge(
    op: Op, variant: Variant, scope: Scope, dtypes: list[str]
) -> tuple[DeviceDescription | None, Backend | None, list[str]]:
    """The device a variant would run on, its backend, or the reasons it cannot run."""
    from prism_core._knowledge.plugins import plugins

    way_out = op.name == WAY_OUT and variant.reference  # NumPy's, whichever backend is named
    if scope.backend is not None and variant.backend != scope.backend and not way_out:
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
    # Availability is asked later, in rank order, and only until a candidate that can run is
    # found (``_verified``): asking imports the framework (torch takes 1-3 s), which a call
    # that runs on NumPy must not pay.  Already known, it rejects here.
    if not scope.simulated and _known(backend):
        why = _unavailable(backend)
        if why is not None:
            return None, backend, [why]
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
        unheld = _not_held(backend, dev, dtypes)
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
    return None, backend, reasons


def _not_held(backend: Backend, device: DeviceDescription, dtypes: Sequence[str]) -> str:
    """Why ``backend`` cannot take arrays of ``dtypes`` on ``device`` (it declares the dtypes it
    holds, ``Backend.dtypes``, and these are not among them); empty when it can."""
    held = backend.dtypes(device)
    if held is None or not dtypes:
        return ""
    from prism_core._description.dtypes import dtype_name

    missing = [n for n in dict.fromkeys(map(dtype_name, dtypes)) if n not in held]
    if not missing:
        return ""
    return (
        f"{backend.name} holds no {', '.join(missing)} on {device.device_type} "
        f"(it holds {', '.join(sorted(held))})"
    )


def _verified(
    ranked: tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...],
) -> tuple[
    tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...], tuple[Candidate, ...]
]:
    """The candidates without those whose backend is not available, asking each backend in
    rank order until one can run; the candidates after it are asked only if a call falls back
    to them (a backend that cannot import then fails there, and is recorded as a fallback)."""
    kept: list[tuple[Variant, DeviceDescription | None, Backend | None]] = []
    rejected: list[Candidate] = []
    for i, (variant, _dev, backend) in enumerate(ranked):
        why = _unavailable(backend)
        if why is None:
            kept.extend(ranked[i:])
            break
        rejected.append(
            Candidate(variant.name, variant.backend, False, None, (why,), (), variant.priority)
        )
    return tuple(kept), tuple(rejected)


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


def _build(
    op: Op, key: Any, scope: Scope, args: Sequence[Any], built_at: int, measured: bool = True
) -> Plan:
    from prism_core._knowledge.plugins import plugins

    dtypes = _array_dtypes(op, args)
    accepted: list[tuple[tuple[Any, ...], Variant, DeviceDescription | None, Backend | None]] = []
    rejected: list[Candidate] = []
    from prism_core._dispatch import movement

    arrays = _array_args(op, args)
    for i, a in enumerate(arrays):
        if type(a).__name__ == "matrix" and type(a).__module__.startswith("numpy"):
            raise TypeError(
                f"{op.name}: array argument {i} is a numpy.matrix, which Prism does not take "
                "(its operators and reductions are not an array's, and NumPy recommends "
                "against it); pass numpy.asarray(m)"
            )
    # NumPy's masked arrays run on NumPy, whose functions know the mask: another backend
    # would take the data and drop the mask, silently.
    masked = any(movement.is_masked(a) for a in arrays)
    for variant in list(op.variants):
        dev, backend, reasons = _judge(op, variant, scope, dtypes)
        if masked and not reasons and not variant.reference:
            reasons = [
                "a numpy.ma.MaskedArray runs on NumPy, whose functions know its mask "
                f"({variant.backend} would drop it)"
            ]
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
    # as it is ranks before one that must move them.  Without arrays (creation ops; Python
    # scalars only: `log(0.5)`), automatic mode makes the reference backend's arrays.
    ps = plugins()
    has_arrays = any(
        isinstance(a, ArraySpec) or ps.owner(a) is not None for a in _array_args(op, args)
    )
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
    # a backend or a device (then results are that backend's arrays), or the op is the way
    # out to NumPy (``to_numpy``'s result is NumPy's whichever backend the argument was).
    named = scope.backend is not None or scope.device is not None
    back = None if named or op.name == WAY_OUT else home
    moves: dict[str, Moves] = {}
    for variant, dev, _backend in ranked:
        runner = reference if (scope.simulated and reference is not None) else variant
        moves[variant.name] = _moves(
            op, backends.get(runner.backend), dev, args, back, bring_back=not has_arrays
        )
    if scope.simulated and reference is not None:
        # Nothing installed may run on the simulated device, or every candidate may decline
        # this call; simulation executes on the reference all the same (the decision says so).
        moves[""] = _moves(
            op, backends.get(reference.backend), None, args, back, bring_back=not has_arrays
        )
    plan = Plan(ranked, tuple(rejected), scope.simulated, reference, moves, built_at)
    if measured:
        plan.ranked, plan.basis = _by_measurement(op, scope, ranked, args, dtypes, moves)
        plan.untuned = plan.basis.note.startswith(_NOT_TUNED)
        if plan.basis.decided_by == "modelled" or scope.execution is not None:
            # Predicted times depend on the size: this op's plans are keyed by size bucket
            # from now on (this plan, keyed without it, is never looked up again).
            size_keyed(op)
    if not scope.simulated:
        plan.ranked, more = _verified(plan.ranked)
        plan.rejected = plan.rejected + more
    _finish(op, key, plan)
    if scope.split is not None:
        # The scope splits this op (prism_core._pipeline.split hands it over as an object with
        # runner_for): every call runs the split, whose parts run in scopes without it.  The
        # decision above stays what explain shows; plans of scopes without a split are as
        # they were (the scope is in the plan key).
        runner = scope.split.runner_for(op)
        if runner is not None:
            plan.fn = plan.first = plan.checked = plan.check = None
            plan.call = runner
            plan.untuned = False
    # Unless something imported logging, no handler can be configured and a record would go
    # nowhere: the first call does not import it.
    logging = sys.modules.get("logging")
    if logging is not None and logging.getLogger("prism_core").isEnabledFor(logging.DEBUG):
        logging.getLogger("prism_core").debug(
            "dispatch %s in %r: %s (rejected: %s)",
            op.name,
            scope,
            ranked[0][0].name if ranked else "nothing eligible",
            "; ".join(f"{c.variant}: {', '.join(c.reasons)}" for c in rejected) or "none",
        )
    return plan


_NOT_TUNED = "not tuned"

#: Tuning on first use (``prism_core._tuning.tuner.set_autotune``): a function called with
#: ``(op, key, args, kwargs)`` when a call's plan has no tuned times; it measures within its
#: time budget and returns whether it stored any.  ``None``: off (the default).
_first_use: list[Callable[..., bool] | None] = [None]


def _size_text(bucket: int) -> str:
    """The element counts of size bucket ``bucket`` (``tuning.bucket_of``)."""
    return "no elements" if bucket <= 0 else f"{1 << (bucket - 1)} to {(1 << bucket) - 1} elements"


def _by_measurement(
    op: Op,
    scope: Scope,
    ranked: tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...],
    args: Sequence[Any],
    dtypes: list[str],
    moves: dict[str, Moves],
) -> tuple[tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...], Basis]:
    """The candidates in the order measurements give, and what decided it.

    Tuned times apply when the tuner measured this op on this host for the same device set,
    variant set, dtype and size bucket (``prism_core._knowledge.tuning``), and only when it
    found a significant gap (``decided == "measured"``): otherwise the declared order stands.
    Without tuned times, candidates on different devices are ordered by the performance
    model's predicted times (a GPU pays the transfer of arguments that are not on it).  Under
    an execution policy (``execution_policy()``), the policy ranks tuned or predicted times,
    costs and energies, and a call nothing can run within its limits raises ``PolicyError``.
    A named backend or device still chooses among its own variants this way; ``prefer=
    "reference"`` never reorders.
    """
    policy = scope.execution
    if scope.prefer == "reference" or scope.simulated or not ranked:
        return ranked, Basis()
    if len(ranked) < 2 and policy is None:
        return ranked, Basis()
    dtype = tuning_dtype(dtypes)
    if dtype is None:
        return ranked, Basis(note="no tuned times: the arrays have no dtypes")
    # Mixed dtypes have tuned times (keyed by their signature), but neither a performance
    # model nor an execution policy to predict with: those keep the declared order.
    mixed = len(set(dtypes)) > 1
    if mixed and policy is not None:
        return ranked, Basis(note="no tuned times: the arrays have mixed dtypes")
    from prism_core._dispatch.registry import _tuned
    from prism_core._knowledge.tuning import records

    tuned = _tuned[0] if _tuned[0] is not None else records()
    device_types = {d.device_type for _, d, _ in ranked if d is not None}
    devices = "+".join(sorted(device_types))
    names = tuple(sorted(v.name for v, _, _ in ranked))
    bucket = sum(_elements(a) for a in _array_args(op, args)).bit_length()
    entry = tuned.lookup(op.name, devices, dtype, bucket, names)
    where = f"{devices}, {dtype}, {_size_text(bucket)}"
    if entry is None and not _first_use[0]:
        # The nearest tuned size of the same op, devices, dtype and variants stands in (the
        # plan key has no size bucket where the tuned choice is the same at every size).
        same = [
            e
            for e in tuned.for_op(op.name)
            if e.device == devices and e.dtype == dtype and tuple(e.variants) == names
        ]
        if same:
            entry = min(same, key=lambda e: (abs(e.bucket - bucket), e.bucket))
            where = f"{devices}, {dtype}, {_size_text(entry.bucket)} (the nearest tuned size)"
    position = {v.name: i for i, (v, _, _) in enumerate(ranked)}
    if policy is not None:
        return _by_policy(op, policy, ranked, args, dtype, moves, entry, where, tuned)
    if entry is None:
        if len(device_types) > 1 and not mixed:
            modelled = _by_model(op, ranked, args, dtype, moves, tuned)
            if modelled is not None:
                return modelled
        return ranked, Basis(note=f"{_NOT_TUNED} for {where}")
    times = tuple(sorted(entry.times.items(), key=lambda kv: kv[1]))
    if entry.decided != "measured":
        return ranked, Basis(
            "tie", f"timed on {where}; no variant significantly faster than the declared first",
            times,
        )
    measured = dict(entry.times)
    # Measured variants by time, then any the tuner could not time, in the declared order.
    reordered = tuple(
        sorted(
            ranked,
            key=lambda r: (
                r[0].name not in measured,
                measured.get(r[0].name, 0.0),
                position[r[0].name],
            ),
        )
    )
    return reordered, Basis("measured", f"timed on {where}", times)


class _Row:
    """A candidate as an execution policy sees it: a model row, labelled by variant."""

    __slots__ = ("cost_per_hour", "cost_per_run", "energy_j", "label", "seconds", "throughput")

    def __init__(self, label: str, row: Any) -> None:
        self.label = label
        self.seconds = row.seconds
        self.throughput = row.throughput
        self.cost_per_run = row.cost_per_run
        self.cost_per_hour = row.cost_per_hour
        self.energy_j = row.energy_j


def _model_for(tuned: Any) -> Any:
    """The performance model, calibrated with this host's stored calibration (one per set of
    records: ``prism bench`` stores it)."""
    from prism_core._knowledge.model import PerformanceModel

    cached = _models.get(id(tuned))
    if cached is not None and cached[0] is tuned:
        return cached[1]
    try:
        model = PerformanceModel(tuned.calibration or None)
    except (TypeError, ValueError):  # a calibration the model rejects: use the descriptions
        model = PerformanceModel()
    _models.clear()
    _models[id(tuned)] = (tuned, model)
    return model


_models: dict[int, tuple[Any, Any]] = {}


def _predictions(
    op: Op,
    ranked: tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...],
    args: Sequence[Any],
    dtype: str,
    moves: dict[str, Moves],
    tuned: Any,
) -> list[Any] | str:
    """Each candidate's model row (its arguments on the host when they must move), or why
    the model cannot predict them."""
    from prism_core._knowledge.model import ModelError

    model = _model_for(tuned)
    shapes = [tuple(int(d) for d in getattr(a, "shape", ())) for a in _array_args(op, args)]
    rows = []
    for variant, dev, _backend in ranked:
        if dev is None:
            return f"{variant.name} runs on no described device"
        there = not moves.get(variant.name, _NO_MOVES).converters
        try:
            prediction = model.predict(op.name, shapes, dtype, dev, on_device=there)
        except (ModelError, ValueError, TypeError) as exc:
            return str(exc)
        rows.append(model.row(prediction, name=variant.name))
    return rows


def _by_model(
    op: Op,
    ranked: tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...],
    args: Sequence[Any],
    dtype: str,
    moves: dict[str, Moves],
    tuned: Any,
) -> tuple[tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...], Basis] | None:
    rows = _predictions(op, ranked, args, dtype, moves, tuned)
    if isinstance(rows, str):
        return None
    order = sorted(range(len(ranked)), key=lambda i: (rows[i].seconds, i))
    times = tuple((ranked[i][0].name, rows[i].seconds) for i in order)
    return tuple(ranked[i] for i in order), Basis(
        "modelled", "predicted by the performance model (not tuned for this size)", times
    )


def _by_policy(
    op: Op,
    policy: Any,
    ranked: tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...],
    args: Sequence[Any],
    dtype: str,
    moves: dict[str, Moves],
    entry: Any,
    where: str,
    tuned: Any,
) -> tuple[tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...], Basis]:
    """The candidates ranked by an execution policy: those meeting its limits first, each
    group by the policy's priority over tuned times (where measured) or predicted ones."""
    predicted = _predictions(op, ranked, args, dtype, moves, tuned)
    measured = dict(entry.times) if entry is not None else {}
    if entry is not None and entry.decided != "measured":
        # No significant gap: the times within 5 % of the declared first's count as equal.
        first = measured.get(ranked[0][0].name)
        if first is not None:
            measured = {
                k: (first if abs(v - first) <= 0.05 * first else v) for k, v in measured.items()
            }
    rows: list[_Row] = []
    sources = set()
    for i, (variant, dev, _backend) in enumerate(ranked):
        label = f"{variant.name} on {dev.device_type if dev is not None else '?'}"
        seconds = measured.get(variant.name)
        if isinstance(predicted, str):
            if seconds is None:
                return ranked, Basis(
                    note=f"policy {policy.describe()}: {variant.name} has no tuned time and the "
                    f"model cannot predict it ({predicted}); the declared order stands"
                )
            row: Any = _Row(label, _Timed(seconds))
            sources.add("measured")
        else:
            model_row = predicted[i]
            if seconds is not None:
                model_row = _model_for(tuned).row(model_row.prediction, seconds=seconds)
                sources.add("measured")
            else:
                sources.add("modelled")
            row = _Row(label, model_row)
        rows.append(row)
    ok = [not policy.misses(r) for r in rows]
    if not any(ok):
        policy.choose(rows)  # raises PolicyError naming the best candidate and its misses
    order = sorted(range(len(rows)), key=lambda i: (not ok[i], policy.key(rows[i])[:-1], i))
    times = tuple((ranked[i][0].name, rows[i].seconds) for i in order)
    decided = "measured" if sources == {"measured"} else "modelled"
    note = f"policy {policy.describe()}" + (f"; timed on {where}" if measured else "")
    return tuple(ranked[i] for i in order), Basis(decided, note, times)


class _Timed:
    """A measured time alone (no model row): no throughput, price or energy known."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.throughput = 0.0
        self.cost_per_run = None
        self.cost_per_hour = None
        self.energy_j = None


def _moves(
    op: Op,
    backend: Backend | None,
    device: DeviceDescription | None,
    args: Sequence[Any],
    home: Backend | None,
    *,
    bring_back: bool = False,
) -> Moves:
    """What must move for ``backend`` to take the call's arrays on ``device``, what that
    costs, and how the result goes back to ``home`` (``None``: it stays the backend's).

    A result comes back only where arguments moved, unless ``bring_back``: a call without
    any backend's arrays (Python scalars only) runs elsewhere only as a fallback, and its
    result is ``home``'s arrays all the same."""
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
        move = movement.mover(
            backend, device, ps.owner, reference=_reference_backend(op, ps), op=op.name, position=i
        )
        converters.append((i, movement.each(move) if _is_sequence(op, i, value) else move))
        sentences.extend(movement.describe(i, a, ps.owner(a), backend, device) for a in foreign)
    if not converters and not (bring_back and home is not None and home is not backend):
        return _NO_MOVES
    result = None
    if home is not None and home is not backend:
        result = movement.bring_back(
            backend, home, _reference_backend(op, ps), op=op.name, device=device
        )
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
    new.basis = plan.basis
    new.untuned = plan.untuned
    _finish(op, key, new)
    return new


# -- calling ----------------------------------------------------------------------------------


def _key(op: Op, scope_token: Any, args: Sequence[Any]) -> tuple[Any, ...]:
    """The cache key of a call; the hot path (``ops._make_function``) builds the same inline."""
    parts: list[Any] = [scope_token]
    keying = op._keying[0]
    arrays = _array_args(op, args)
    for a in arrays:
        parts.append(type(a))
        if keying:
            parts.append(getattr(a, "dtype", None))
    if keying == 2:
        parts.append(sum(_elements(a) for a in arrays).bit_length())
    return tuple(parts)


def _elements(value: Any) -> int:
    """How many elements an array argument has (NumPy's ``size``, torch's ``numel()``)."""
    size = getattr(value, "size", None)
    if isinstance(size, int):
        return size
    numel = getattr(value, "numel", None)
    if callable(numel):
        return int(numel())
    shape = getattr(value, "shape", None)
    if shape is None:
        return 1  # a scalar
    n = 1
    for d in shape:
        n *= int(d)
    return n


def plan_for(op: Op, key: Any, args: Sequence[Any]) -> tuple[Any, Plan]:
    """The key of the call and its cached plan, or a new one (stored only if nothing it was
    built from changed meanwhile).

    The key is made again when the op's keying changed meanwhile (tuning records loaded for
    the first time may add the size bucket to it).
    """
    plan: Plan | None = op._plans.get(key)
    if plan is None:
        keying = op._keying[0]
        ensure_ready()  # plugins' variants join their ops, tuning records (may bump)
        if op._keying[0] != keying:
            key = _key(op, SCOPE.get(), args)
            plan = op._plans.get(key)
            if plan is not None:
                return key, plan
        built_at = generation()  # read before anything the plan is built from
        plan = _build(op, key, current_scope(), args, built_at)
        store_plan(op, key, plan, built_at)
    return key, plan


def call_slow(op: Op, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A call without a cached plan: build one, then run it (tuning it first when tuning on
    first use is on and nothing was measured for it).  While a pipeline is planned, the
    planner answers instead (``PLANNING``)."""
    planning = PLANNING.get()
    if planning is not None:
        return planning(op, args, kwargs)
    key, plan = plan_for(op, key, args)
    hook = _first_use[0]
    if hook is not None and plan.untuned and hook(op, key, args, kwargs):
        key, plan = plan_for(op, _key(op, SCOPE.get(), args), args)
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
    try:
        current = _record_failure(op, key, plan, variant, exc)
    except BackendError as error:
        lenient = LENIENT.get()
        if lenient is None:
            raise
        return lenient(op, args, kwargs, error)
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
    that raised and on no other.  Where the scope cannot run the call
    and a lenient stage is in force (``LENIENT``), the stage decides what runs it.
    """
    try:
        return _run_checked(op, key, plan, args, kwargs, tried, reasons, error)
    except (BackendError, DispatchError) as exc:
        lenient = LENIENT.get()
        if lenient is None:
            raise
        return lenient(op, args, kwargs, exc)


def _run_checked(
    op: Op,
    key: Any,
    plan: Plan,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    tried: Sequence[str],
    reasons: list[str] | None,
    error: Exception | None,
) -> Any:
    done = set(tried)
    declined = list(reasons or ())
    while True:
        for variant, _dev, _backend in plan.ranked:
            name = variant.name
            if name in done or name in plan.failed:
                continue
            done.add(name)
            # A candidate after the first that can run was not asked whether its backend is
            # available (``_verified``): ask now, before falling back to it.
            unavailable = None if plan.simulated else _unavailable(_backend)
            if unavailable is not None:
                declined.append(f"{name}: {unavailable}")
                continue
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
        else f"variant {name} failed: {describe_exception(exc)}"
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
                op.name, name, describe_exception(exc), nxt
            )
        else:
            record.count += 1
        first = (op.name, name) not in _warned
        _warned.add((op.name, name))
    sink = _FALLBACK_SINK.get()
    if sink is not None:
        sink.append(FallbackRecord(op.name, name, describe_exception(exc), nxt))
    if first:
        said = (
            str(exc)
            if isinstance(exc, VariantImportError)
            else f"variant {name} failed ({describe_exception(exc)})"
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


# -- what the tuner measures -------------------------------------------------------------------


@dataclass(frozen=True)
class Runner:
    """One eligible variant of a call, ready to run as dispatch would run it: with the moves of
    its arguments and of its result, and waiting for its backend to finish (``synchronize``),
    so that timing ``run()`` times what a caller gets."""

    variant: str
    backend: str
    device: str | None
    run: Callable[[], Any]
    #: Whether the backend compiles per input shape (``Backend.compiles``): the first call
    #: at a shape then includes a compilation, which tuning reports apart.
    compiles: bool = False

    __module__ = "prism_core"


@dataclass(frozen=True)
class Candidates:
    """The variants a call chooses among in the scope in force, in the declared order (the
    order without measurements), and what a tuning record of the call is keyed by."""

    op: str
    runners: tuple[Runner, ...]
    #: Variants that cannot run this call (rejected, or whose ``can_run`` declines it).
    skipped: tuple[str, ...]
    devices: str
    variants: tuple[str, ...]
    dtype: str | None
    bucket: int


def candidates(op: Any, args: Sequence[Any], kwargs: dict[str, Any] | None = None) -> Candidates:
    """The eligible variants of ``op(*args, **kwargs)`` in the scope in force, each as a
    :class:`Runner`, in declared order (tuned times do not reorder them)."""
    from prism_core._knowledge.plugins import plugins

    the_op = as_op(op)
    kw = dict(kwargs or {})
    ensure_ready()
    scope = current_scope()
    plan = _build(the_op, None, scope, args, generation(), measured=False)
    backends = plugins().backends
    runners: list[Runner] = []
    skipped = [f"{c.variant}: {'; '.join(c.reasons)}" for c in plan.rejected]
    for variant, dev, _backend in plan.ranked:
        if variant.can_run is not None:
            verdict = variant.can_run(*args, **kw)
            if verdict is not True:
                skipped.append(f"{variant.name}: {verdict or 'can_run said no'}")
                continue
        executor = _executor(plan, variant)
        try:
            fn = executor.resolve()
        except VariantImportError as exc:
            skipped.append(f"{variant.name}: {exc}")
            continue
        runners.append(
            Runner(
                variant.name,
                executor.backend,
                dev.device_type if dev is not None else None,
                _runner(
                    fn,
                    args,
                    kw,
                    plan.moves.get(variant.name, _NO_MOVES),
                    backends.get(executor.backend),
                ),
                getattr(backends.get(executor.backend), "compiles", False),
            )
        )
    dtype = tuning_dtype(_array_dtypes(the_op, args))
    return Candidates(
        the_op.name,
        tuple(runners),
        tuple(skipped),
        "+".join(sorted({d.device_type for _, d, _ in plan.ranked if d is not None})),
        tuple(sorted(v.name for v, _, _ in plan.ranked)),
        dtype,
        sum(_elements(a) for a in _array_args(the_op, args)).bit_length(),
    )


def _runner(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    moves: Moves,
    backend: Backend | None,
) -> Callable[[], Any]:
    name = backend.name if backend is not None else ""
    converters = moves.converters
    result = moves.result
    call_args = tuple(args)

    def run() -> Any:
        entering(name)  # as a call does: the other backends' idle pools are released
        out = (
            fn(*_convert(call_args, converters), **kwargs)
            if converters
            else fn(*call_args, **kwargs)
        )
        if backend is not None:
            backend.synchronize(out)  # the time is the work's, also on a device that runs async
        if result is not None:
            out = result(out)
        return out

    return run


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


def _positional_parameters(op: Op) -> tuple[tuple[str, bool], ...] | None:
    """``op``'s positional parameters as ``(name, required)``: from the signature its
    documentation opens with (the catalogue's ``clip(x, /, min=None, max=None): ...``), else
    from its reference function (an op declared with ``@operation``); ``None`` if neither says."""
    import ast
    import inspect
    import re

    doc = op.__doc__ or ""
    opening = re.match(rf"(?:[\w.]+\.)?{re.escape(op.__name__)}\(", doc)
    end = doc.find(")") if opening else -1
    while opening and end >= 0:  # the first ")" that closes a valid parameter list
        try:
            tree = ast.parse(f"def _{doc[opening.end() - 1 : end + 1]}: pass")
        except SyntaxError:
            end = doc.find(")", end + 1)
            continue
        function = tree.body[0]
        assert isinstance(function, ast.FunctionDef)
        names = [a.arg for a in function.args.posonlyargs + function.args.args]
        optional = len(function.args.defaults)
        return tuple((n, i < len(names) - optional) for i, n in enumerate(names))
    reference = next((v.fn for v in op.variants if v.reference and callable(v.fn)), None)
    if reference is None:
        return None
    try:
        parameters = inspect.signature(reference).parameters.values()
    except (TypeError, ValueError):  # a function without a signature (a NumPy ufunc)
        return None
    return tuple(
        (p.name, p.default is p.empty)
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )


def array_parameters(op: Op) -> tuple[tuple[str, bool], ...] | None:
    """``op``'s array parameters (its ``array_args``) as ``(name, required)``: ``clip``'s are
    ``x`` (required), ``min`` and ``max`` (optional).  ``None`` when the op does not list its
    arrays (``einsum``), takes none (``zeros``), or has no signature to read them in."""
    parameters = _positional_parameters(op)
    if not op.array_args or parameters is None or max(op.array_args) >= len(parameters):
        return None
    return tuple(parameters[i] for i in op.array_args)


def arrays_taken(op: Op, parameters: Sequence[tuple[str, bool]]) -> str:
    """How many arrays ``op`` takes, in words: ``"2 arrays (x1, x2)"``, ``"1 to 3 arrays (x;
    min, max optional)"``."""
    required = [n for n, r in parameters if r]
    optional = [n for n, r in parameters if not r]
    count = f"{len(required)} to {len(parameters)}" if optional else f"{len(required)}"
    names = ", ".join(required) + (f"; {', '.join(optional)} optional" if optional else "")
    return f"{op.name} takes {count} array{'s' if len(parameters) != 1 else ''} ({names})"


_Plan = TypeVar("_Plan", covariant=True)


class _PlansItself(Protocol[_Plan]):
    """What plans itself when explained: a ``@prism_core.pipeline`` function."""

    def __prism_explain__(self, *args: Any, **kwargs: Any) -> _Plan: ...


@overload
def explain(op: _PlansItself[_Plan], *args: Any, **kwargs: Any) -> _Plan: ...
@overload
def explain(op: Any, *args: Any, **kwargs: Any) -> Decision: ...
def explain(op: Any, *args: Any, **kwargs: Any) -> Any:
    """The decision ``op(*args, **kwargs)`` gets in the scope in force, without running it.

    Arguments may be real arrays or :class:`ArraySpec` (shape and dtype only).  An object
    that plans itself (a ``@prism_core.pipeline`` function: ``__prism_explain__``) gives its
    own plan.
    """
    planner = getattr(op, "__prism_explain__", None)
    if planner is not None:
        return planner(*args, **kwargs)
    the_op = as_op(op)
    arrays = array_parameters(the_op)
    if arrays is not None:
        # Nothing runs to refuse a call the op cannot take: the candidates would be judged on
        # arguments that are not there.
        at = the_op.array_args or ()
        given = [i < len(args) or n in kwargs for i, (n, _) in zip(at, arrays, strict=True)]
        missing = [n for (n, needed), ok in zip(arrays, given, strict=True) if needed and not ok]
        if missing:
            raise TypeError(
                f"{arrays_taken(the_op, arrays)}; {sum(given)} given, {', '.join(missing)} "
                "missing: explain a call the op can take (an ArraySpec stands for an array)"
            )
    if not current_scope().simulated:
        # A decision shows every backend's availability (a call asks only as far as it needs:
        # ``_verified``), so that a rejection says "not available" and why, first.
        from prism_core._knowledge.plugins import plugins

        for backend in list(plugins().backends.values()):
            _available(backend)
    key = _key(the_op, SCOPE.get(), args)
    from_cache = key in the_op._plans
    key, plan = plan_for(the_op, key, args)
    scope = current_scope()
    candidates: list[Candidate] = []
    chosen: tuple[Variant, DeviceDescription | None, Backend | None] | None = None
    for variant, dev, _backend in plan.ranked:
        reasons: tuple[str, ...] = ()
        ok = True
        problem = variant.import_problem()
        unavailable = None if plan.simulated else _unavailable(_backend)
        if variant.name in plan.failed:
            ok, reasons = False, ("failed earlier in this process (see prism_core.fallbacks())",)
        elif unavailable:
            ok, reasons = False, (unavailable,)
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
        # The plan's sentences describe the arguments of the call that built it: say what these
        # arguments cost (same types, so the same moves), and how the result goes back.
        cached = plan.moves.get(chosen[0].name, _NO_MOVES).sentences
        movement = _moves(the_op, chosen[2], chosen[1], args, None).sentences + tuple(
            line for line in cached if line.startswith("result: ")
        )
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
        basis=plan.basis,
    )
