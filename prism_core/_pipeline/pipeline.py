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
import textwrap
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, overload

from prism_core._pipeline.planner import _drive, _Planner, _StopTrace, _traced
from prism_core._pipeline.report import (
    PipelineError,
    PipelinePlan,
    PipelineReport,
    PipelineRun,
    StageFallback,
    StageReport,
)
from prism_core._pipeline.stage import (
    _HOST,
    Stage,
    StageHost,
    StageRun,
    _describe,
    _merge_fallbacks,
    stage,
)
from prism_core.kernel.dispatch import movement
from prism_core.kernel.dispatch.fallback import fallback_recording
from prism_core.kernel.dispatch.interception import PLANNING
from prism_core.kernel.dispatch.scope import SCOPE, current_scope
from prism_core.kernel.errors import describe_exception
from prism_core.kernel.public import home

__all__ = ["Pipeline", "PipelineError", "pipeline"]

_INLINED = ("planned as part of the pipeline being planned: its stages are in that plan",)
_STAGE_KEYWORDS = frozenset({"preferred_backend", "device", "simulate", "dispatch"})


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
                        _merge_fallbacks(
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
