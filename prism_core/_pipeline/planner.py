"""Planning a pipeline without running it: a trace whose op calls the planner answers.

:meth:`Pipeline.explain <prism_core.pipelines.Pipeline.explain>` calls the pipeline's function
with :class:`_Traced` arguments (a shape, a dtype and the backend whose array it would be) and
:class:`_Planner` as the stages' host: stages hand it their placement, and each op call
(``interception.PLANNING``) gets dispatch's decision, the predicted time (tuned, else the
model's) and a spec of its result (torch's meta device, else the NumPy reference on
zero-stride views of small inputs).  docs/pipelines.md, "Planning a pipeline".
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from prism_core._pipeline.report import PlannedCall, PlannedStage
from prism_core._pipeline.stage import StageHost, StageRun
from prism_core.kernel.dispatch.arguments import ArraySpec
from prism_core.kernel.dispatch.decision import Decision
from prism_core.kernel.dispatch.explain import explain
from prism_core.kernel.dispatch.scope import SCOPE, Scope, current_scope
from prism_core.kernel.errors import describe_exception

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.registry import Op

#: Planning runs an op's NumPy reference on zero-stride views of its array arguments when they
#: hold at most this many elements in all: the reference computes the whole result, so this
#: bounds the work (a 256 x 256 matmul: 33 MFLOP, about a millisecond).
REFERENCE_LIMIT = 1 << 17


def _drive(coroutine: Awaitable[Any]) -> str | None:
    """Plan an ``async`` pipeline: run its coroutine to the end on an event loop of its own
    (in a task, which starts from this context: the planner's), or, where this thread already
    runs a loop (``explain`` called from async code, which cannot wait here), step it by
    hand: planned calls never suspend, so a pipeline that awaits only other coroutines
    finishes, and one that waits for the loop (a sleep, a socket) stops the trace there."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(coroutine)
        finally:
            loop.close()
        return None
    step = getattr(coroutine, "send", None)
    if step is None:
        return "the pipeline returned an awaitable that is not a coroutine: not traced"
    try:
        while True:
            yielded = step(None)
            if yielded is not None:
                close = getattr(coroutine, "close", None)
                if close is not None:
                    close()
                return (
                    "the pipeline waited for something outside Prism (an event loop's "
                    "future): the trace stops there"
                )
    except StopIteration:
        return None


class _StopTrace(BaseException):
    """Ends a trace (a BaseException, so that the pipeline's own ``except Exception`` does not
    swallow it and go on with nothing)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Traced(ArraySpec):
    """An array in a trace: its shape and dtype, and the backend whose array it would be at
    run time (``holder``).  Its own type, so that no cached plan is ever keyed by it."""

    __slots__ = ("holder",)

    def __init__(self, shape: Sequence[int], dtype: Any, holder: str = "numpy") -> None:
        super().__init__(shape, dtype)
        self.holder = holder

    def plain(self) -> ArraySpec:
        return ArraySpec(self.shape, self.dtype)


def _traced(value: Any) -> Any:
    """An argument as the trace sees it: arrays and specs become :class:`_Traced`."""
    if isinstance(value, _Traced):
        return value
    if isinstance(value, ArraySpec):
        return _Traced(value.shape, value.dtype)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_traced(v) for v in value)
    if isinstance(value, dict):
        return {k: _traced(v) for k, v in value.items()}
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if (
        shape is not None
        and dtype is not None
        and (hasattr(value, "__dlpack__") or hasattr(value, "__array__"))
    ):
        from prism_core.kernel.plugins import plugins

        owner = plugins().owner(value)
        try:
            return _Traced(tuple(int(s) for s in shape), dtype, owner.name if owner else "numpy")
        except (TypeError, ValueError):
            return value
    return value


def _flat(values: Any) -> Iterator[Any]:
    if isinstance(values, (list, tuple)):
        for v in values:
            yield from _flat(v)
    elif isinstance(values, dict):
        for v in values.values():
            yield from _flat(v)
    else:
        yield values


class _StageBuilder:
    def __init__(self, run: StageRun) -> None:
        self.run = run
        self.calls: list[PlannedCall] = []

    def build(self) -> PlannedStage:
        p = self.run.placement
        return PlannedStage(
            self.run.name,
            p.placement,
            p.backend,
            p.device,
            p.simulated,
            self.run.stage.dispatch,
            p.why,
            p.skipped,
            tuple(self.calls),
        )


class _Planner(StageHost):
    """The host of a planned pipeline: stages hand it their placement, calls their arguments."""

    planning = True

    def __init__(self) -> None:
        self.stages: list[PlannedStage] = []
        self.outside: list[PlannedCall] = []
        self.current: _StageBuilder | None = None
        #: copy -> the interned scope it copies (scopes compare by identity).
        self.originals: dict[int, tuple[Scope, Scope]] = {}

    def unshared(self, scope: Scope) -> Scope:
        """A copy of ``scope`` that no cached plan is keyed by (plans key scopes by identity),
        so that every call in the trace misses the cache and reaches :meth:`trace`."""
        copy = object.__new__(Scope)
        for slot in Scope.__slots__:
            if slot != "__weakref__":
                object.__setattr__(copy, slot, getattr(scope, slot))
        self.originals[id(copy)] = (copy, scope)
        return copy

    def original(self, scope: Scope | None) -> Scope | None:
        if scope is None:
            return None
        found = self.originals.get(id(scope))
        return found[1] if found is not None and found[0] is scope else scope

    def entered(self, run: StageRun) -> None:
        assert run.scope is not None
        self.current = _StageBuilder(run)
        SCOPE.set(self.unshared(run.scope))  # the stage's block restores the scope when it ends

    def exited(self, run: StageRun) -> None:
        if self.current is not None and self.current.run is run:
            self.stages.append(self.current.build())
            self.current = None

    @staticmethod
    def _decide(
        scope: Scope | None, op: Op, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Decision, Scope]:
        """``explain``'s decision for the call in ``scope`` (a real, interned scope)."""
        token = SCOPE.set(scope)
        try:
            return explain(op, *args, **kwargs), current_scope()
        finally:
            SCOPE.reset(token)

    def trace(self, op: Op, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """What a call in the trace returns: a spec of its result, after recording the call."""
        scope = self.original(SCOPE.get())
        plain_args = tuple(_plain(a) for a in args)
        plain_kwargs = {k: _plain(v) for k, v in kwargs.items()}
        # What dispatch decides for: the arrays as they would be at run time where a stand-in
        # without data can be had (torch's meta tensors), else host arrays (ArraySpec).
        stand_args = tuple(_stand_in(a) for a in args)
        stand_kwargs = {k: _stand_in(v) for k, v in kwargs.items()}
        notes = _holder_notes(op, args)
        decision, real_scope = self._decide(scope, op, stand_args, stand_kwargs)
        run = self.current.run if self.current is not None else None
        if (
            decision.chosen is None
            and not decision.simulated
            and run is not None
            and run.placement.lenient
            and run.innermost()
        ):
            # As in a run: the stage's preferred placement cannot run the call, and the stage is
            # in automatic mode, so it runs in the scope the stage was entered in.
            decision, real_scope = self._decide(
                self.original(run.outer), op, stand_args, stand_kwargs
            )
            notes += (
                f"the stage's placement ({run.placement.placement}) has no variant for it: it "
                "runs in automatic dispatch, as the stage is in automatic mode",
            )
        token = SCOPE.set(real_scope)
        try:
            seconds, transfer, predicted = _predict(op, decision, stand_args)
        finally:
            SCOPE.reset(token)
        holder = _result_holder(op, args, decision, real_scope)
        try:
            result, result_by = _result_spec(op, plain_args, plain_kwargs, holder)
            shown = _spec_text(result)
        except _Unknown as unknown:
            result, result_by, shown = None, unknown.why, "unknown"
        call = PlannedCall(
            op.name,
            decision.signature,
            decision,
            seconds,
            transfer,
            predicted,
            shown,
            result_by,
            notes,
        )
        if self.current is not None:
            self.current.calls.append(call)
        else:
            self.outside.append(call)
        if result is None:
            raise _StopTrace(f"{op.name}: the shape of its result is not known: {result_by}")
        return result


def _plain(value: Any) -> Any:
    if isinstance(value, _Traced):
        return value.plain()
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_plain(v) for v in value)
    return value


def _stand_in(value: Any) -> Any:
    """An argument as the decision sees it: a torch-held array as a tensor on torch's meta
    device (shape and dtype, no storage: the decision is the one a tensor gets), any other as
    an :class:`ArraySpec`, which stands for a NumPy array."""
    if isinstance(value, _Traced) and value.holder == "torch":
        meta = _meta_tensor(value)
        if meta is not None:
            return meta
    return _plain(value)


def _meta_tensor(spec: ArraySpec) -> Any:
    import sys

    torch = sys.modules.get("torch")  # held by torch at run time: torch is imported already
    if torch is None:
        return None
    from prism_core.kernel.description.dtypes import dtype as to_dtype

    torch_dtype = getattr(torch, to_dtype(spec.dtype).name.rstrip("_"), None)
    if torch_dtype is None:
        return None
    return torch.empty(spec.shape, dtype=torch_dtype, device="meta")


def _holder_notes(op: Op, args: tuple[Any, ...]) -> tuple[str, ...]:
    away = [
        (i, a.holder)
        for i, a in enumerate(args)
        if isinstance(a, _Traced)
        and a.holder != "numpy"
        and not (a.holder == "torch" and _meta_tensor(a) is not None)
    ]
    if not away:
        return ()
    where = ", ".join(f"argument {i} is {h}'s" for i, h in away)
    return (
        f"at run time {where}: the decision shown is for host (NumPy) arrays, so the moves "
        "at run time differ (dispatch takes each array from where it is)",
    )


def _result_holder(op: Op, args: tuple[Any, ...], decision: Decision, scope: Scope) -> str:
    """The backend whose array the call's result would be at run time (dispatch's rule: a
    named backend or device keeps its results; automatic mode brings them back to the
    arguments' backend; a simulated call runs on the reference)."""
    if scope.simulated:
        return "numpy"
    if scope.backend is not None or scope.device is not None:
        return _array_owner(decision.chosen_backend or scope.backend)
    holders = [a.holder for a in _flat(args) if isinstance(a, _Traced)]
    return next((h for h in holders if h != "numpy"), "numpy")


def _array_owner(backend_name: str | None) -> str:
    """Whose arrays a backend's results are: a backend that takes NumPy arrays as they are
    computes on them and gives NumPy arrays (SciPy, the loopback test backend); the others
    give their own (torch's tensors, CuPy's arrays)."""
    from prism_core.kernel.plugins import plugins

    backend = plugins().backends.get(backend_name or "")
    from prism_core.kernel.dispatch.moves import is_native

    if backend is None or is_native(backend, ArraySpec((0,))):
        return "numpy"
    return backend.name


def _spec_text(value: Any) -> str:
    if isinstance(value, ArraySpec):
        return f"{value.dtype.name}[{'x'.join(map(str, value.shape))}]"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_spec_text(v) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    return type(value).__name__


# -- predicted times ---------------------------------------------------------------------------


def _predict(
    op: Op, decision: Decision, args: tuple[Any, ...]
) -> tuple[float | None, float | None, str]:
    """The chosen variant's time: tuned where measured, else the model's prediction on its
    device (with the transfer of arguments that must move there), else why neither."""
    from prism_core._tuning.model import ModelError
    from prism_core._tuning.ranking import model_for, tuned_records
    from prism_core.kernel.contract.array import Array
    from prism_core.kernel.dispatch.arguments import array_args

    if decision.chosen is None:
        return None, None, "not predicted: no variant can run it"
    times = dict(decision.basis.times)
    if decision.basis.decided_by in ("measured", "tie") and decision.chosen in times:
        return times[decision.chosen], None, "measured: timed on this host"
    if decision.chosen_device is None:
        return None, None, "not predicted: the chosen variant runs on no described device"
    arrays = [a for a in array_args(op, args) if isinstance(a, Array)]
    from prism_core.kernel.description.dtypes import dtype as to_dtype
    from prism_core.kernel.devices import get_device

    try:
        dtypes = {to_dtype(a.dtype) for a in arrays}
    except (TypeError, ValueError):
        dtypes = set()
    if len(dtypes) != 1:
        return None, None, "not predicted: the arrays have mixed or no dtypes"
    if any(None in a.shape for a in arrays):
        return None, None, "not predicted: the size of an array is not known yet (a lazy array)"
    try:
        (dt,) = dtypes
        device = get_device(decision.chosen_device)
        tuned = tuned_records()
        prediction = model_for(tuned).predict(
            op.name,
            [tuple(int(s or 0) for s in a.shape) for a in arrays],  # no None: above
            dt,
            device,
            on_device=not decision.data_movement,
        )
    except (ModelError, ValueError, TypeError, LookupError) as exc:
        return None, None, f"not predicted: {exc}"
    return prediction.seconds, prediction.transfer_s, f"modelled: {prediction.bound}-bound"


# -- result shapes -----------------------------------------------------------------------------


class _Unknown(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _result_spec(
    op: Op, args: tuple[Any, ...], kwargs: dict[str, Any], holder: str
) -> tuple[Any, str]:
    """The result of ``op(*args, **kwargs)`` with :class:`ArraySpec` for arrays, and how that
    was worked out; :class:`_Unknown` with why when it cannot be."""
    specs = [a for a in _flat([args, kwargs]) if isinstance(a, ArraySpec)]
    why_not: list[str] = []
    meta = _on_meta(op, args, kwargs, holder)
    if isinstance(meta, str):
        why_not.append(meta)
    else:
        return meta, "torch meta device (the op's torch variant, no data)"
    if not specs:
        why_not.append(
            "none of its arguments is a traced array, and running it would do its real work"
        )
        raise _Unknown("; ".join(why_not))
    elements = sum(math.prod(s.shape) for s in specs)
    if elements > REFERENCE_LIMIT:
        why_not.append(
            f"its array arguments hold {elements:,} elements, over the {REFERENCE_LIMIT:,} that "
            "planning runs the NumPy reference on"
        )
        raise _Unknown("; ".join(why_not))
    reference = next((v for v in op.variants if v.reference), None)
    if reference is None:
        why_not.append("it has no reference variant")
        raise _Unknown("; ".join(why_not))
    import numpy as np

    def view(value: Any) -> Any:
        if isinstance(value, ArraySpec):
            numpy_dtype = getattr(value.dtype, "numpy", value.dtype)
            if numpy_dtype is None or not isinstance(numpy_dtype, np.dtype):
                raise _Unknown(f"NumPy has no {value.dtype.name}: the reference cannot run")
            return np.broadcast_to(np.zeros((), numpy_dtype), value.shape)
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(view(v) for v in value)
        return value

    try:
        out = reference.resolve()(
            *(view(a) for a in args), **{k: view(v) for k, v in kwargs.items()}
        )
    except _Unknown:
        raise
    except Exception as exc:
        why_not.append(f"its NumPy reference on zero-stride views raised {describe_exception(exc)}")
        raise _Unknown("; ".join(why_not)) from None
    return _as_specs(out, holder), "NumPy reference on zero-stride views (small inputs)"


def _on_meta(op: Op, args: tuple[Any, ...], kwargs: dict[str, Any], holder: str) -> Any:
    """The result computed on torch's meta device by the op's torch variant, or why not."""
    variants = [v for v in op.variants if v.backend == "torch"]
    if not variants:
        return "no torch variant of it is loaded to run on torch's meta device"
    variants.sort(key=lambda v: ("cuda" in v.name, v.name))
    try:
        fn = variants[0].resolve()
        import torch
    except Exception as exc:
        return f"its torch variant cannot be loaded ({describe_exception(exc)})"
    from prism_core.kernel.description.dtypes import dtype as to_dtype

    def meta(value: Any) -> Any:
        if isinstance(value, ArraySpec):
            name = to_dtype(value.dtype).name.rstrip("_")
            return torch.empty(value.shape, dtype=getattr(torch, name), device="meta")
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(meta(v) for v in value)
        return value

    try:
        with torch.device("meta"):
            out = fn(*(meta(a) for a in args), **{k: meta(v) for k, v in kwargs.items()})
    except Exception as exc:
        return f"its torch variant on the meta device raised {describe_exception(exc)}"
    return _as_specs(out, holder)


def _as_specs(value: Any, holder: str) -> Any:
    """Arrays (NumPy's, torch's, NumPy scalars) in a result as :class:`_Traced`."""
    if isinstance(value, tuple):
        items = [_as_specs(v, holder) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_as_specs(v, holder) for v in value]
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return _Traced(tuple(int(s) for s in shape), dtype, holder)
    return value
