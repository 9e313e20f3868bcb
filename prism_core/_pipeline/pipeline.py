"""Pipelines: a function of stages, run with a report or planned without data.

``@prism.pipeline`` wraps a function whose body is a sequence of ``with prism.stage(...)``
blocks: ``fn(...)`` returns what it returns, ``fn.run(...)`` a :class:`PipelineRun` (result and
report), ``fn.explain(...)`` a :class:`PipelinePlan` without running anything.  The stages its
source shows with literal arguments are checked (``ast``) before any stage runs; planning
traces the function with :class:`~prism_core.ArraySpec` values, each op call answered by the
planner (``interception.PLANNING``).  docs/pipelines.md: "Running a pipeline", "Checked before
the first stage", "Planning a pipeline".
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import math
import textwrap
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from prism_core._pipeline.report import (
    PipelineError,
    PipelinePlan,
    PipelineReport,
    PipelineRun,
    PlannedCall,
    PlannedStage,
    StageFallback,
    StageReport,
)
from prism_core._pipeline.stage import _HOST, Stage, StageHost, StageRun, stage
from prism_core.kernel.dispatch import movement
from prism_core.kernel.dispatch.arguments import ArraySpec
from prism_core.kernel.dispatch.decision import Decision
from prism_core.kernel.dispatch.explain import explain
from prism_core.kernel.dispatch.fallback import fallback_recording
from prism_core.kernel.dispatch.interception import PLANNING
from prism_core.kernel.dispatch.scope import SCOPE, Scope, current_scope
from prism_core.kernel.errors import describe_exception
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.registry import Op

__all__ = ["Pipeline", "PipelineError", "pipeline"]

#: Planning runs an op's NumPy reference on zero-stride views of its array arguments when they
#: hold at most this many elements in all: the reference computes the whole result, so this
#: bounds the work (a 256 x 256 matmul: 33 MFLOP, about a millisecond).
REFERENCE_LIMIT = 1 << 17

_INLINED = ("planned as part of the pipeline being planned: its stages are in that plan",)
_STAGE_KEYWORDS = frozenset({"preferred_backend", "device", "simulate", "dispatch"})


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


# -- the stages in the source ------------------------------------------------------------------


@dataclass(frozen=True)
class _SourceStage:
    """A ``stage(...)`` call found in a pipeline function's source, with literal arguments."""

    name: str
    kwargs: tuple[tuple[str, Any], ...]
    line: int


def _stage_calls(fn: Callable[..., Any]) -> tuple[tuple[_SourceStage, ...], tuple[str, ...]]:
    """The stages written plainly in ``fn``'s source, and notes on what could not be read."""
    target = inspect.unwrap(fn)
    try:
        source = inspect.getsource(target)
        first = target.__code__.co_firstlineno
    except (OSError, TypeError, AttributeError) as exc:
        return (), (
            f"the source of {getattr(fn, '__qualname__', fn)!r} is not available "
            f"({exc}): each stage is checked when it is reached",
        )
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError as exc:
        return (), (
            f"the source could not be parsed ({exc.msg}): each stage is checked when it is reached",
        )
    found: list[_SourceStage] = []
    notes: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        named = (isinstance(func, ast.Name) and func.id == "stage") or (
            isinstance(func, ast.Attribute) and func.attr == "stage"
        )
        if not named or len(node.args) != 1:
            continue
        if any(k.arg is None or k.arg not in _STAGE_KEYWORDS for k in node.keywords):
            continue  # not Prism's stage(), or **kwargs: nothing to read here
        line = first + node.lineno - 1
        try:
            name = ast.literal_eval(node.args[0])
            kwargs = tuple((k.arg, ast.literal_eval(k.value)) for k in node.keywords if k.arg)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            notes.append(
                f"the stage at line {line} has arguments computed at run time: checked when reached"
            )
            continue
        if not isinstance(name, str):
            continue
        found.append(_SourceStage(name, kwargs, line))
    found.sort(key=lambda s: s.line)
    return tuple(found), tuple(notes)


# -- runs --------------------------------------------------------------------------------------


class _Run(StageHost):
    """A pipeline run: collects its stages' reports (a stage entered again adds to its own)."""

    def __init__(self) -> None:
        self.reports: dict[str, StageReport] = {}

    def exited(self, run: StageRun) -> None:
        report = run.report
        if report is None:
            return
        seen = self.reports.get(report.name)
        self.reports[report.name] = report if seen is None else seen.merged(report)


def _merge(items: Sequence[StageFallback]) -> tuple[StageFallback, ...]:
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


@home("prism_core.pipelines")
class Pipeline:
    """A function made a pipeline by :func:`pipeline`.

    Calling it runs the function and returns its result; :meth:`run` also returns the report;
    :meth:`explain` plans it without running it.  :attr:`stages` are the stages its source
    shows.
    """

    def __init__(self, fn: Callable[..., Any], name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"pipeline(): decorates a function; got {_describe(fn)}")
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or repr(fn)
        self.is_async = inspect.iscoroutinefunction(inspect.unwrap(fn))
        functools.update_wrapper(self, fn)
        self._source: tuple[tuple[_SourceStage, ...], tuple[str, ...]] | None = None
        self._built: tuple[int, tuple[tuple[_SourceStage, Stage], ...]] | None = None
        #: The pipeline whose source and checked stages this one uses (itself, or the
        #: pipeline a bound method was made from).
        self._cache: Pipeline = self

    def __repr__(self) -> str:
        return f"<Pipeline {self.name!r}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """A pipeline defined in a class is a method: bound, it is a pipeline of the bound
        method (sharing what was read from the source)."""
        if obj is None:
            return self
        bound = Pipeline(self.fn.__get__(obj, objtype), self.name)
        bound._cache = self  # the source is the same: read and check it once
        return bound

    @property
    def stages(self) -> tuple[str, ...]:
        """The names of the stages the function's source shows, in source order."""
        return tuple(dict.fromkeys(s.name for s in self._read()[0]))

    def _read(self) -> tuple[tuple[_SourceStage, ...], tuple[str, ...]]:
        cache = self._cache
        if cache._source is None:
            cache._source = _stage_calls(cache.fn)
        return cache._source

    def check(self) -> tuple[str, ...]:
        """Check the stages the source shows, as a run does before its first stage: raises what
        entering them would raise (an unknown name, a pinned device that is absent, a strict
        stage with nothing available), with the line it is at; returns what was checked."""
        from prism_core.kernel.events import generation

        found, notes = self._read()
        now = generation()
        cache = self._cache
        built = cache._built
        if built is None or built[0] != now:
            stages = []
            for src in found:
                try:
                    stages.append((src, stage(src.name, **dict(src.kwargs))))
                except Exception as exc:
                    _note(exc, src, self.name)
                    raise
            built = cache._built = (now, tuple(stages))
        for src, st in built[1]:
            try:
                st.resolve()
            except Exception as exc:
                _note(exc, src, self.name)
                raise
        names = list(dict.fromkeys(s.name for s in found))
        checked = (
            f"{len(names)} stage{'' if len(names) == 1 else 's'} checked before the first ran: "
            f"{', '.join(names)}"
            if names
            else "no stage with literal arguments found in the source"
        )
        return (checked, *notes)

    # -- running ------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the pipeline and return what the function returns (:meth:`run` for the report)."""
        if isinstance(_HOST.get(), _Planner):
            return self.fn(*args, **kwargs)  # planned as part of the pipeline being planned
        if self.is_async:
            return self._result_async(args, kwargs)
        return self.run(*args, **kwargs).result

    async def _result_async(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        run: PipelineRun = await self._run_async(args, kwargs)
        return run.result

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Run the pipeline: a :class:`PipelineRun` (``result``, ``report``); for an ``async``
        function, an awaitable of one.  If the function raises, the exception reaches the
        caller with the run's report as its ``report`` attribute."""
        if isinstance(_HOST.get(), _Planner):
            # Planned as part of the pipeline being planned: its stages are that plan's.
            result = self.fn(*args, **kwargs)
            return PipelineRun(result, PipelineReport(self.name, (), 0.0, checked=_INLINED))
        if self.is_async:
            return self._run_async(args, kwargs)
        with self._running() as finish:
            result = self.fn(*args, **kwargs)
        return PipelineRun(result, finish())

    async def _run_async(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> PipelineRun:
        with self._running() as finish:
            result = await self.fn(*args, **kwargs)
        return PipelineRun(result, finish())

    @contextlib.contextmanager
    def _running(self) -> Iterator[Callable[[], PipelineReport]]:
        checked = self.check()
        host = _Run()
        token = _HOST.set(host)
        started = time.perf_counter()
        report: list[PipelineReport] = []

        def finish(error: str | None = None) -> PipelineReport:
            if not report:
                report.append(
                    PipelineReport(
                        self.name,
                        tuple(host.reports.values()),
                        time.perf_counter() - started,
                        tuple(moves),
                        _merge(
                            [StageFallback(r.op, r.variant, r.error, r.fell_back_to) for r in fbs]
                        ),
                        checked,
                        error,
                    )
                )
            return report[0]

        try:
            with movement.recording() as moves, fallback_recording() as fbs:
                yield finish
        except BaseException as exc:
            rep = finish(describe_exception(exc))
            with contextlib.suppress(AttributeError, TypeError):
                exc.report = rep  # type: ignore[attr-defined]
            raise
        finally:
            with contextlib.suppress(ValueError):  # ended in another context: not ours
                _HOST.reset(token)

    # -- planning -----------------------------------------------------------------------------

    def explain(self, *args: Any, **kwargs: Any) -> PipelinePlan:
        """The plan of this pipeline for these arguments, without running it.

        Arguments may be real arrays or :class:`~prism_core.ArraySpec` (shape and dtype only);
        anything else is passed as it is.  The stages are placed as a run would place them
        (present devices, or the ones a stage simulates); each op call gets dispatch's decision
        and the model's predicted time.  What the trace cannot see through is said in the
        plan (``stopped``, ``not_reached``, each call's ``notes``).
        """
        checked = self.check()
        planner = _Planner()
        traced_args = tuple(_traced(a) for a in args)
        traced_kwargs = {k: _traced(v) for k, v in kwargs.items()}
        stopped: str | None = None
        host_token = _HOST.set(planner)
        scope_token = SCOPE.set(planner.unshared(current_scope()))
        planning_token = PLANNING.set(planner.trace)
        try:
            result = self.fn(*traced_args, **traced_kwargs)
            if inspect.isawaitable(result):
                stopped = _drive(result)
        except _StopTrace as stop:
            stopped = stop.why
        except Exception as exc:
            stopped = f"the function raised {describe_exception(exc)}{_where(exc, self.fn)}"
        finally:
            PLANNING.reset(planning_token)
            SCOPE.reset(scope_token)
            _HOST.reset(host_token)
        reached = {s.name for s in planner.stages}
        not_reached = tuple(n for n in self.stages if n not in reached)
        return PipelinePlan(
            self.name,
            tuple(planner.stages),
            tuple(planner.outside),
            stopped,
            not_reached,
            checked,
        )

    __prism_explain__ = explain


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


def _note(exc: BaseException, src: _SourceStage, pipeline: str) -> None:
    add_note = getattr(exc, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(
            f"(stage {src.name!r} at line {src.line} of pipeline {pipeline!r}, found in its "
            "source and checked before any stage ran)"
        )


def _where(exc: BaseException, fn: Callable[..., Any]) -> str:
    """`` (at file.py:12)``: the last line of the pipeline's own file in the traceback."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return ""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == code.co_filename]
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename.rpartition('/')[2]}:{last.lineno}: {last.line})"


@overload
def pipeline(fn: Callable[..., Any], *, name: str | None = None) -> Pipeline: ...
@overload
def pipeline(
    fn: None = None, *, name: str | None = None
) -> Callable[[Callable[..., Any]], Pipeline]: ...
def pipeline(
    fn: Callable[..., Any] | None = None, *, name: str | None = None
) -> Pipeline | Callable[[Callable[..., Any]], Pipeline]:
    """Make ``fn`` a pipeline (``@prism.pipeline`` or ``@prism.pipeline(name="...")``).

    ``fn(...)`` runs it and returns its result, ``fn.run(...)`` returns the result and the
    report (:class:`PipelineRun`), ``fn.explain(...)`` and ``prism.explain(fn, ...)`` plan it
    without running it (:class:`PipelinePlan`).
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"pipeline(): name must be a string; got {_describe(name)}")
    if fn is None:
        return lambda f: Pipeline(f, name)
    return Pipeline(fn, name)


# -- planning ----------------------------------------------------------------------------------


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
    from prism_core.kernel.dispatch.arguments import array_args

    if decision.chosen is None:
        return None, None, "not predicted: no variant can run it"
    times = dict(decision.basis.times)
    if decision.basis.decided_by in ("measured", "tie") and decision.chosen in times:
        return times[decision.chosen], None, "measured: timed on this host"
    if decision.chosen_device is None:
        return None, None, "not predicted: the chosen variant runs on no described device"
    arrays = [a for a in array_args(op, args) if isinstance(a, ArraySpec) or hasattr(a, "shape")]
    from prism_core.kernel.description.dtypes import dtype as to_dtype
    from prism_core.kernel.devices import get_device

    try:
        dtypes = {to_dtype(a.dtype) for a in arrays}
    except (TypeError, ValueError):
        dtypes = set()
    if len(dtypes) != 1:
        return None, None, "not predicted: the arrays have mixed or no dtypes"
    try:
        (dt,) = dtypes
        device = get_device(decision.chosen_device)
        tuned = tuned_records()
        prediction = model_for(tuned).predict(
            op.name,
            [tuple(int(s) for s in a.shape) for a in arrays],
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
        why_not.append(
            f"its NumPy reference on zero-stride views raised {describe_exception(exc)}"
        )
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
