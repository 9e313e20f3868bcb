"""Execution strategies: which stage or op runs where, and which is split across what.

:class:`ExecutionStrategy` records the seed's ``assign(operation=..., target=...,
distribution="data_parallel", split_ratio=...)``, where ``operation`` names an op if one has
that name, else a pipeline stage; :class:`Executor` runs a function or pipeline with it in
force: stages placed through ``stage_overrides``, ops pinned or split wherever they are called.
Names are checked by ``assign``, presence by ``run`` before anything runs, and a device not
present is simulated.  The rules and the seed's example: docs/split.md, "Strategies".
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from prism_core._pipeline.pipeline import Pipeline
from prism_core._pipeline.split import SplitSet, SplitSpec, SplitTarget, parse_target, split_rules
from prism_core._pipeline.split.decision import _ratio
from prism_core._pipeline.split.rules import _no_rule
from prism_core._pipeline.split.targets import _Parsed, bind
from prism_core._pipeline.stage import stage_overrides
from prism_core.kernel.dispatch.ops import get_op
from prism_core.kernel.dispatch.registry import OperationError
from prism_core.kernel.dispatch.scope import ScopeBlock
from prism_core.kernel.errors import PrismWarning, did_you_mean, user_stacklevel
from prism_core.kernel.public import home

__all__ = ["DISTRIBUTIONS", "Assignment", "ExecutionStrategy", "Executor"]

#: The distributions an assignment may ask for (``None``: one target, no split).
DISTRIBUTIONS = ("data_parallel",)


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


@home("prism_core.pipelines")
@dataclass(frozen=True)
class Assignment:
    """One line of a strategy: ``operation`` (an op or a stage, ``kind`` says which) runs on
    ``targets`` (names checked, presence not yet), split by ``distribution`` with
    ``split_ratio`` (normalised; ``"auto"``; ``None``: even) along ``axis``."""

    operation: str
    kind: str
    targets: tuple[_Parsed, ...]
    distribution: str | None = None
    split_ratio: tuple[float, ...] | str | None = None
    axis: int = 0

    def describe(self) -> str:
        names = ", ".join(t.label for t in self.targets)
        what = f"{self.kind} {self.operation!r}"
        if self.distribution is None:
            return f"{what} on {names}"
        ratio = (
            "even"
            if self.split_ratio is None
            else self.split_ratio
            if isinstance(self.split_ratio, str)
            else "/".join(f"{r:.2g}" for r in self.split_ratio)
        )
        return f"{what} {self.distribution} across {names} ({ratio}, axis {self.axis})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "kind": self.kind,
            "targets": [t.label for t in self.targets],
            "distribution": self.distribution,
            "split_ratio": (
                list(self.split_ratio) if isinstance(self.split_ratio, tuple) else self.split_ratio
            ),
            "axis": self.axis,
        }


def _op_name(operation: str) -> str | None:
    """The op ``operation`` names (its own name for an alias), or ``None``: a stage."""
    try:
        return get_op(operation).name
    except OperationError:
        return None


@home("prism_core.pipelines")
class ExecutionStrategy:
    """Where the stages and ops of a run go: :meth:`assign` them, then run with
    :class:`Executor`.  See the module docstring (and docs/split.md) for the rules."""

    def __init__(self) -> None:
        self._assignments: dict[str, Assignment] = {}

    def assign(
        self,
        operation: str,
        target: Any,
        distribution: str | None = None,
        split_ratio: Any = None,
        axis: int = 0,
    ) -> Assignment:
        """Assign ``operation`` (a stage name, or an op name) to ``target``.

        :param target: one target (a backend name, ``"cpu"``, a device type or family, or a
            ``(device, backend)`` tuple) or a list of targets (``distribution`` then required).
        :param distribution: ``None`` (one target) or ``"data_parallel"`` (split across the
            targets).
        :param split_ratio: with ``data_parallel``: one non-negative share per target,
            ``"auto"`` (tuned throughputs or the performance model) or ``None`` (even).
        :param axis: with ``data_parallel``: the axis to split along (as the op's split rule
            counts it; docs/split.md).
        :raises ValueError: a name no backend or device has, a ratio that does not fit, a list
            of targets without ``data_parallel``, ``operation`` assigned already.
        """
        if not isinstance(operation, str) or not operation:
            raise TypeError(
                "assign(): operation must be a stage name such as 'sequence_alignment' or an op "
                f"name such as 'matmul'; got {_describe(operation)}"
            )
        op = _op_name(operation)
        key = op or operation
        kind = "op" if op is not None else "stage"
        earlier = self._assignments.get(key)
        if earlier is not None:
            raise ValueError(
                f"assign(): {kind} {key!r} is assigned already ({earlier.describe()}); one "
                "assignment per stage or op (make a new ExecutionStrategy to change it)"
            )
        if distribution is not None and not isinstance(distribution, str):
            raise TypeError(
                f"assign({operation!r}): distribution must be 'data_parallel' or None; got "
                f"{_describe(distribution)}"
            )
        if distribution is not None and distribution not in DISTRIBUTIONS:
            raise ValueError(
                f"assign({operation!r}): distribution={distribution!r} is not a distribution"
                f"{did_you_mean(distribution, DISTRIBUTIONS)}; use 'data_parallel' (split across "
                "the targets) or None (one target)"
            )
        if isinstance(target, list):
            if not target:
                raise ValueError(f"assign({operation!r}): target=[] names no target")
            items = list(target)
        else:
            items = [target]
        parsed = tuple(
            parse_target(t, f"assign({operation!r}): target" + (f"[{i}]" if len(items) > 1 else ""))
            for i, t in enumerate(items)
        )
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"assign({operation!r}): axis must be an int; got {_describe(axis)}")
        if distribution is None:
            if len(parsed) > 1:
                raise ValueError(
                    f"assign({operation!r}): {len(parsed)} targets need "
                    "distribution='data_parallel' (the work split across them); one target runs "
                    "the whole of it"
                )
            if split_ratio is not None:
                raise ValueError(
                    f"assign({operation!r}): split_ratio={split_ratio!r} needs "
                    "distribution='data_parallel' and several targets"
                )
            ratio: tuple[float, ...] | str | None = None
        else:
            if len(parsed) < 2:
                raise ValueError(
                    f"assign({operation!r}): distribution='data_parallel' splits the work across "
                    f"targets, and one is given ({parsed[0].label!r}); give a list of two or more, "
                    "or leave distribution out to run it on this one"
                )
            ratio = _ratio(split_ratio, len(parsed), f"assign({operation!r}): split_ratio")
            if op is not None and op not in split_rules():
                raise _no_rule(get_op(op))
        found = Assignment(key, kind, parsed, distribution, ratio, axis)
        self._assignments[key] = found
        return found

    @property
    def assignments(self) -> tuple[Assignment, ...]:
        """The assignments, in the order they were made."""
        return tuple(self._assignments.values())

    def __len__(self) -> int:
        return len(self._assignments)

    def __iter__(self) -> Iterator[Assignment]:
        return iter(self.assignments)

    def describe(self) -> str:
        if not self._assignments:
            return "ExecutionStrategy: nothing assigned"
        return "ExecutionStrategy:\n" + "\n".join(f"  {a.describe()}" for a in self.assignments)

    def as_dict(self) -> dict[str, Any]:
        return {"assignments": [a.as_dict() for a in self.assignments]}

    def __repr__(self) -> str:
        return f"<ExecutionStrategy: {len(self)} assignment{'s' * (len(self) != 1)}>"


@dataclass(frozen=True)
class _Bound:
    """A strategy bound to this host for one run: the op specs and the stage overrides."""

    ops: tuple[SplitSpec, ...]
    stages: dict[str, dict[str, Any]]
    simulated: tuple[str, ...]


@home("prism_core.pipelines")
class Executor:
    """Runs functions and pipelines with an :class:`ExecutionStrategy` in force.

    :param simulate: what to do with a device the strategy names that is not present here:
        ``None`` (default): simulate it, with a :class:`PrismWarning` naming it; ``True``:
        simulate it without a warning; ``False``: raise ``DeviceNotPresentError`` before
        anything runs.
    :param share_threads: split parts running on the host at once share its cores.
    :param timeout: seconds to wait for the parts of each split (``None``: no limit).
    """

    def __init__(
        self,
        strategy: ExecutionStrategy,
        *,
        simulate: bool | None = None,
        share_threads: bool = True,
        timeout: float | None = None,
    ) -> None:
        from prism_core._pipeline.split.spec import _check_timeout

        if not isinstance(strategy, ExecutionStrategy):
            raise TypeError(
                "Executor(): strategy must be a prism_core.pipelines.ExecutionStrategy; got "
                f"{_describe(strategy)}"
            )
        if simulate is not None and not isinstance(simulate, bool):
            raise TypeError(
                f"Executor(): simulate must be None, True or False; got {_describe(simulate)}"
            )
        if not isinstance(share_threads, bool):
            raise TypeError(
                f"Executor(): share_threads must be True or False; got {_describe(share_threads)}"
            )
        self.strategy = strategy
        self.simulate = simulate
        self.share_threads = share_threads
        self.timeout = _check_timeout(timeout)

    def __repr__(self) -> str:
        return f"<Executor of {self.strategy!r}>"

    def _bind(self) -> _Bound:
        """Every target of the strategy on this host (errors before anything runs)."""
        simulated: list[str] = []
        ops: list[SplitSpec] = []
        stage_specs: list[tuple[Assignment, SplitSpec]] = []
        for a in self.strategy.assignments:
            where = f"assignment of {a.kind} {a.operation!r}"
            targets: list[SplitTarget] = []
            for i, parsed in enumerate(a.targets):
                t = bind(parsed, self.simulate is not False, f"{where}: target[{i}]")
                if t.simulated and t.device is not None:
                    simulated.append(t.device)
                targets.append(t)
            spec = SplitSpec(
                tuple(targets),
                a.split_ratio,
                a.axis,
                frozenset({a.operation}) if a.kind == "op" else None,
                self.share_threads,
                self.timeout,
                strict=a.kind == "op",
            )
            if a.kind == "op":
                ops.append(spec)
            else:
                stage_specs.append((a, spec))
        stages: dict[str, dict[str, Any]] = {}
        for a, spec in stage_specs:
            note = f"ExecutionStrategy: {a.describe()}"
            if a.distribution is None:
                t = spec.targets[0]
                stages[a.operation] = {
                    "device": t.description,
                    "simulated": t.simulated,
                    "backend": t.backend,
                    "note": note,
                }
            else:
                # The stage's split, then the op assignments (more specific: they win for their
                # ops, and the stage's scope replaces the run's split).
                stages[a.operation] = {"split": SplitSet((*ops, spec)), "note": note}
        return _Bound(tuple(ops), stages, tuple(dict.fromkeys(simulated)))

    @contextlib.contextmanager
    def in_force(self) -> Iterator[None]:
        """Put the strategy in force for the block (``run`` does it around its function): the
        op assignments in the scope, the stage assignments as stage overrides.  Every target
        is checked first."""
        bound = self._bind()
        if bound.simulated and self.simulate is None:
            warnings.warn(
                PrismWarning(
                    "ExecutionStrategy: not present here, so simulated (their parts run on the "
                    f"reference backend, labelled simulated): {', '.join(bound.simulated)}; "
                    "Executor(strategy, simulate=True) says that is intended, simulate=False "
                    "makes it an error"
                ),
                stacklevel=user_stacklevel(),
            )
        with contextlib.ExitStack() as stack:
            if bound.ops:
                stack.enter_context(ScopeBlock({"split": SplitSet(bound.ops)}))
            if bound.stages:
                stack.enter_context(stage_overrides(bound.stages))
            yield

    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn(*args, **kwargs)`` with the strategy in force.

        A ``@prism.pipeline`` function runs with its report: the result is its
        :class:`PipelineRun` (``result, report = executor.run(...)``), whose stage reports say
        where each stage ran (the strategy's note) and hold the splits.  A plain function's
        result is what it returns.  For ``async`` functions, use :meth:`run_async`.
        """
        if not callable(fn):
            raise TypeError(f"Executor.run(): fn must be callable; got {_describe(fn)}")
        if _is_async(fn):
            raise TypeError(
                f"Executor.run(): {getattr(fn, '__name__', fn)!r} is async; use "
                "`await executor.run_async(fn, ...)`, which keeps the strategy in force while "
                "it runs"
            )
        with self.in_force():
            out = fn.run(*args, **kwargs) if isinstance(fn, Pipeline) else fn(*args, **kwargs)
        self._check_stages(fn, out)
        return out

    async def run_async(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """:meth:`run` for ``async`` functions and pipelines (awaited inside the strategy)."""
        if not callable(fn):
            raise TypeError(f"Executor.run_async(): fn must be callable; got {_describe(fn)}")
        with self.in_force():
            out = fn.run(*args, **kwargs) if isinstance(fn, Pipeline) else fn(*args, **kwargs)
            if inspect.isawaitable(out):
                out = await _awaited(out)
        self._check_stages(fn, out)
        return out

    def explain(self, fn: Pipeline, *args: Any, **kwargs: Any) -> Any:
        """The plan of the pipeline ``fn`` with the strategy in force, without running it
        (``fn.explain``): each stage where the strategy puts it, and why."""
        if not isinstance(fn, Pipeline):
            raise TypeError(
                "Executor.explain(): fn must be a @prism_core.pipeline function (only a "
                f"pipeline can be planned without running it); got {_describe(fn)}"
            )
        with self.in_force():
            return fn.explain(*args, **kwargs)

    def _check_stages(self, fn: Any, out: Any) -> None:
        """Warn about stage assignments that applied to nothing in a pipeline's run."""
        report = getattr(out, "report", None)
        stages = getattr(report, "stages", None)
        if not isinstance(fn, Pipeline) or stages is None:
            return
        ran = [s.name for s in stages]
        ops = list(split_rules())
        for a in self.strategy.assignments:
            if a.kind == "stage" and a.operation not in ran:
                warnings.warn(
                    PrismWarning(
                        f"ExecutionStrategy: no stage {a.operation!r} ran in pipeline "
                        f"{fn.name!r}, so its assignment did nothing"
                        f"{did_you_mean(a.operation, [*ran, *ops])} (stages that ran: "
                        f"{', '.join(ran) or 'none'}; an op name assigns the op)"
                    ),
                    stacklevel=user_stacklevel(),
                )


def _is_async(fn: Any) -> bool:
    if isinstance(fn, Pipeline):
        return fn.is_async
    return inspect.iscoroutinefunction(inspect.unwrap(fn))


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value
