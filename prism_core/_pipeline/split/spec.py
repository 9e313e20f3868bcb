"""What a scope splits (:class:`SplitSpec`), and one call run as its spec says.

``split(op, *args, targets=..., ratio=...)`` runs one call split; ``splitting([...])`` puts a
spec in the scope, whose :meth:`SplitSpec.runner_for` dispatch asks when it builds a plan.
:func:`_execute` does the work of both: it cuts the call (:mod:`.layout`), shares it among the
targets by the ratio (given, even, or ``"auto"``: :mod:`.decision`), runs the parts
(:mod:`.parts`) and records the split (:mod:`.records`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prism_core._pipeline.split.decision import AutoPlan, _ratio, plan_auto, sizes_of
from prism_core._pipeline.split.layout import _LAYOUTS, _Layout, _Unsplittable
from prism_core._pipeline.split.parts import (
    _data_source,
    _decide,
    _gather,
    _home,
    _Job,
    _moved_bytes,
    _part_record,
    _path_to,
    _pinned_for,
    _run_parts,
    _to_home,
    _whole_within,
)
from prism_core._pipeline.split.records import _RECORDING, SplitRecord, _publish
from prism_core._pipeline.split.rules import _RULES, _no_rule, _rule_for
from prism_core._pipeline.split.targets import SplitTarget, _host_or_none, _plugins, _targets
from prism_core._pipeline.split.threads import _shares
from prism_core.kernel.dispatch.movement import is_masked
from prism_core.kernel.dispatch.ops import (  # (ops, not registry: it installs the op functions)
    Op,
    as_op,
)
from prism_core.kernel.dispatch.scope import SCOPE, current_scope
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.scope import ScopeBlock

__all__ = ["SplitSet", "SplitSpec", "make_spec", "split", "splitting"]


@home("prism_core.pipelines")
@dataclass(frozen=True)
class SplitSpec:
    """What a scope splits (``Scope.split``): the ops (``None``: every op with a split rule),
    across which targets, by which ratio, along which axis.

    Dispatch asks :meth:`runner_for` when it builds the plan of an op in such a scope; the
    runner it gets runs every call of that op as a split.  Specs compare and hash by content,
    so that the same spec in force again reuses the plans made for it.  Made by
    :func:`make_spec` (``splitting``, ``ExecutionStrategy``), which checks everything.
    """

    targets: tuple[SplitTarget, ...]
    ratio: tuple[float, ...] | str | None = None
    axis: int = 0
    ops: frozenset[str] | None = None
    share_threads: bool = True
    timeout: float | None = None
    #: The ops were named (a call that cannot be split is an error), or not (it runs whole).
    strict: bool = False

    def covers(self, op: Op) -> bool:
        """Whether this spec applies to ``op``: named, or (no ops named) splittable."""
        if self.ops is not None:
            return op.name in self.ops
        return len(self.targets) == 1 or op.name in _RULES

    def runner_for(self, op: Op) -> Callable[..., Any] | None:
        """The function dispatch calls instead of the op's variants (``None``: not this op)."""
        if not self.covers(op):
            return None
        spec = self

        def run_split(*args: Any, **kwargs: Any) -> Any:
            return _execute(op, spec, args, kwargs, strict=spec.strict)[0]

        run_split.__name__ = run_split.__qualname__ = f"split[{op.name}]"
        return run_split

    def describe(self) -> str:
        what = "every splittable op" if self.ops is None else ", ".join(sorted(self.ops))
        if len(self.targets) == 1:
            return f"{what} on {self.targets[0].label}"
        ratio = (
            "even"
            if self.ratio is None
            else self.ratio
            if isinstance(self.ratio, str)
            else "/".join(f"{r:.2g}" for r in self.ratio)
        )
        names = ", ".join(t.label for t in self.targets)
        return f"{what} split along axis {self.axis} across {names} ({ratio})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "targets": [t.as_dict() for t in self.targets],
            "ratio": list(self.ratio) if isinstance(self.ratio, tuple) else self.ratio,
            "axis": self.axis,
            "ops": None if self.ops is None else sorted(self.ops),
            "share_threads": self.share_threads,
            "timeout": self.timeout,
        }


@dataclass(frozen=True)
class SplitSet:
    """Several specs in force together (an ``ExecutionStrategy``'s ops and a stage's split):
    the first that covers an op decides for it."""

    specs: tuple[SplitSpec, ...]

    def runner_for(self, op: Op) -> Callable[..., Any] | None:
        for spec in self.specs:
            runner = spec.runner_for(op)
            if runner is not None:
                return runner
        return None

    def describe(self) -> str:
        return "; ".join(s.describe() for s in self.specs)

    def as_dict(self) -> dict[str, Any]:
        return {"specs": [s.as_dict() for s in self.specs]}


def _check_axis(axis: Any, name: str = "axis") -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{name} must be an int (the axis to split along), got {axis!r}")
    return axis


def _check_timeout(timeout: Any) -> float | None:
    if timeout is None:
        return None
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ValueError(f"timeout must be a number of seconds > 0, or None; got {timeout!r}")
    return float(timeout)


def make_spec(
    targets: Any,
    *,
    ratio: Any = None,
    axis: int = 0,
    ops: Iterable[Any] | None = None,
    simulate: bool = False,
    share_threads: bool = True,
    timeout: float | None = None,
    bound: Sequence[SplitTarget] | None = None,
) -> SplitSpec:
    """A checked :class:`SplitSpec` (see :func:`splitting` for the arguments); ``bound``:
    targets bound already (``ExecutionStrategy``)."""
    found = tuple(bound) if bound is not None else _targets(targets, simulate)
    names: frozenset[str] | None = None
    if ops is not None:
        if isinstance(ops, (str, Op)) or callable(ops):
            ops = [ops]
        resolved = [as_op(o) for o in ops]  # OperationError naming close matches
        if len(found) > 1:
            for o in resolved:
                if o.name not in _RULES:
                    raise _no_rule(o)
        names = frozenset(o.name for o in resolved)
    if not isinstance(share_threads, bool):
        raise TypeError(f"share_threads must be True or False, got {share_threads!r}")
    return SplitSpec(
        found,
        _ratio(ratio, len(found)),
        _check_axis(axis),
        names,
        share_threads,
        _check_timeout(timeout),
        strict=names is not None,
    )


def splitting(
    targets: Any,
    *,
    ratio: Any = None,
    axis: int = 0,
    ops: Iterable[Any] | None = None,
    simulate: bool = False,
    share_threads: bool = True,
    timeout: float | None = None,
) -> ScopeBlock:
    """Split the ops in the block across ``targets``: ``with prism.splitting(["numpy",
    "torch"], ratio=[0.3, 0.7]):``.

    ``ops`` (names or op functions) limits it to those ops, and a call of one of them that
    cannot be split (an axis it has not) is an error; without ``ops`` every op with a split
    rule splits, and a call that cannot runs whole in the scope around the block.  With one
    target, the ops run there (no split, no rule needed).  The other arguments are
    :func:`split`'s; everything is checked when ``splitting()`` is called.  An inner block
    replaces an outer one.
    """
    from prism_core.kernel.dispatch.scope import ScopeBlock

    spec = make_spec(
        targets,
        ratio=ratio,
        axis=axis,
        ops=ops,
        simulate=simulate,
        share_threads=share_threads,
        timeout=timeout,
    )
    return ScopeBlock({"split": spec})


def split(
    op: Any,
    *args: Any,
    targets: Any,
    ratio: Any = None,
    split_axis: int = 0,
    simulate: bool = False,
    share_threads: bool = True,
    timeout: float | None = None,
    return_record: bool = False,
    **kwargs: Any,
) -> Any:
    """Run ``op(*args, **kwargs)`` cut along ``split_axis`` across ``targets``, concurrently,
    and gather the parts into what the unsplit call gives.

    :param op: an op name (``"matmul"``), an op function (``prism.matmul``) or an ``Op``; it
        must have a split rule (:func:`split_rules`).
    :param targets: a list of targets: backend names (``"numpy"``, ``"torch"``), ``"cpu"``
        (the host), device types or families (``"nvidia.h100-pcie"``), or ``(device,
        backend)`` pairs.  Each is checked before anything runs.
    :param ratio: the shares of the work, one non-negative number per target (normalised);
        ``None``: even; ``"auto"``: in proportion to each target's tuned throughput for this
        op, else the performance model's predicted time, and no split at all (the whole call
        on the better single target, the record's ``decision`` saying why) unless the split
        is predicted 20 % faster than that target (see docs/split.md).  A given ratio is never
        declined.
    :param split_axis: the axis to cut (as the op's rule counts it: the result's axes for
        elementwise ops and ``matmul``).  Not ``axis``, which stays the op's own keyword
        (``prism.split("fft.fft", x, targets=..., split_axis=0, axis=-1)``).
    :param simulate: devices not present here are simulated: their parts run on the reference
        backend and are labelled so.
    :param share_threads: parts running on the host at once share its cores (docs/split.md,
        "Concurrency").
    :param timeout: seconds to wait for the parts (every part then runs in a split thread, the
        caller only waits); beyond it, :class:`SplitError`, and a part still running is
        abandoned: it runs on to its end in its thread, its result discarded.
    :param return_record: return ``(result, SplitRecord)`` instead of the result.
    :raises SplitError: a part failed (naming it and its index range) or timed out.
    """
    the_op = as_op(op)
    if _rule_for(the_op) is None:
        raise _no_rule(the_op)
    if not isinstance(simulate, bool):
        raise TypeError(f"simulate must be True or False, got {simulate!r}")
    spec = make_spec(
        targets,
        ratio=ratio,
        axis=_check_axis(split_axis, "split_axis"),
        ops=[the_op],
        simulate=simulate,
        share_threads=share_threads,
        timeout=timeout,
    )
    out, record = _execute(the_op, spec, args, kwargs, strict=True, want_record=return_record)
    return (out, record) if return_record else out


# -- running one call as a spec says ------------------------------------------------------------


#: The stand-in target of a call a lenient scope ran whole in the caller's scope.
_CALLER = SplitTarget("the caller's scope", None, None, False, True)


def _execute(
    op: Op,
    spec: SplitSpec,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    strict: bool,
    want_record: bool = False,
) -> tuple[Any, SplitRecord | None]:
    """Run ``op(*args, **kwargs)`` as ``spec`` says; the result and, when asked for or a
    :func:`recording` is in force, its record."""
    for i, a in enumerate(args):
        for item in a if isinstance(a, (list, tuple)) else (a,):
            if is_masked(item):
                raise TypeError(
                    f"{op.name}: argument {i} is a numpy.ma.MaskedArray, and a split would drop "
                    "its mask (the masked values would count); compute it unsplit (automatic "
                    "mode keeps masked arrays on NumPy), or pass x.filled(value) or "
                    "x.compressed()"
                )
    started = time.perf_counter()
    recording_on = want_record or bool(_RECORDING.get())
    caller = current_scope()
    base = caller.replace(split=None, device=None, simulated=False, backend=None)
    targets = spec.targets
    rule = _rule_for(op)
    layout: _Layout | None = None
    note = ""
    if len(targets) > 1:
        if rule is None:
            if strict:
                raise _no_rule(op)
            note = f"not split: {op.name} has no split rule"
        else:
            try:
                layout = _LAYOUTS[rule.kind](rule, args, kwargs, spec.axis)
            except _Unsplittable as exc:
                if strict:
                    raise ValueError(
                        f"{op.name} cannot be split along axis {spec.axis}: {exc}"
                    ) from None
                note = f"not split: {exc}"
    home, reference = _home(args, kwargs)
    # Where the data starts, for the modelled ratio and the records' transfers (only then).
    source = _data_source(args, kwargs, caller) if recording_on or spec.ratio == "auto" else None

    if layout is None:
        # One target, or a call the lenient scope could not split: it runs whole, in this
        # thread (in a worker thread, awaited, with a timeout), on the first target (or, not
        # split, in the caller's scope without the split).
        target = targets[0] if not note else None
        scope = base.replace(**target.changes()) if target is not None else base
        job = _Job(0, target or _CALLER, scope, args, kwargs, 0, 0, None, recording_on)
        if target is not None and recording_on:
            job.path = _path_to(source, target)

        def run_whole() -> Any:
            token = SCOPE.set(scope)
            try:
                if recording_on:
                    _decide(op, job)
                t0 = time.perf_counter()
                out = op.function(*args, **kwargs)
                job.seconds = time.perf_counter() - t0
            finally:
                SCOPE.reset(token)
            if job.path is not None:
                job.moved_bytes = _moved_bytes(args, kwargs, out)
            job.thread = threading.current_thread().name
            return out

        if spec.timeout is None:
            out = run_whole()
        else:
            out = _whole_within(op, job, run_whole, spec.timeout)
        if target is not None:
            out = _to_home(out, home, reference)
        if not recording_on:
            return out, None
        record = SplitRecord(
            op.name,
            None,
            None,
            "whole",
            "one target" if target else "not split",
            (_part_record(job, None, 1.0),),
            0.0,
            time.perf_counter() - started,
            note,
        )
        _publish(record)
        return out, record

    length = layout.length
    plan: AutoPlan | None = None
    if spec.ratio == "auto" and length > 0:
        plan = plan_auto(
            op, targets, layout, args, kwargs, base, source, _host_or_none(), _plugins().backends
        )
        weights, ratio_source = list(plan.weights), plan.ratio_source
    elif spec.ratio == "auto":
        weights, ratio_source = [1.0] * len(targets), "even: the split axis has length 0"
    elif spec.ratio is None:
        weights, ratio_source = [1.0] * len(targets), "even"
    else:
        assert isinstance(spec.ratio, tuple)  # checked by make_spec
        weights, ratio_source = list(spec.ratio), "given"
    if sum(weights) <= 0:
        weights, ratio_source = [1.0] * len(targets), "even: every share came out 0"
    total_weight = sum(weights)
    ratios = [w / total_weight for w in weights]
    sizes = sizes_of(length, weights)
    if length == 0:
        # Nothing to cut: the empty call runs whole on the first target with a share, so that
        # the result has the shape and type the op gives.
        first = next(i for i, w in enumerate(weights) if w > 0)
        sizes[first] = 0
        run = [first]
    else:
        run = [i for i, n in enumerate(sizes) if n > 0]
    shares = (
        _shares(sizes, [t.on_host for t in targets])
        if spec.share_threads
        else [None] * len(targets)
    )
    bounds = [0]
    for n in sizes:
        bounds.append(bounds[-1] + n)
    jobs: list[_Job] = []
    for i, target in enumerate(targets):
        lo, hi = bounds[i], bounds[i + 1]
        whole = hi - lo == length  # (a declined split's target: the arguments as they are)
        part_args, part_kwargs = (
            layout.part(args, kwargs, lo, hi) if length and not whole else (args, kwargs)
        )
        jobs.append(
            _Job(
                i,
                target,
                base.replace(**target.changes()),
                part_args,
                part_kwargs,
                lo,
                hi,
                shares[i],
                recording_on,
                path=_path_to(source, target) if recording_on else None,
            )
        )
    running = [jobs[i] for i in run]
    for job in running:
        known = plan.backends[job.index] if plan is not None and plan.backends else None
        job.pinned = _pinned_for(op, job, source, known)
    results = _run_parts(op, running, home, reference, spec.timeout, layout, ratios)
    gather_started = time.perf_counter()
    out = _gather(op, layout, results, [j.stop - j.start for j in running], base)
    gather_s = time.perf_counter() - gather_started
    if length == 0:
        note = "the split axis has length 0: the empty call ran whole on the first target"
    record = SplitRecord(
        op=op.name,
        axis=layout.axis,
        length=length,
        how=layout.what,
        ratio_source=ratio_source,
        parts=tuple(_part_record(j, layout, ratios[j.index]) for j in jobs),
        gather_s=gather_s,
        total_s=time.perf_counter() - started,
        note=note,
        decision=plan.decision if plan is not None else "",
    )
    _publish(record)
    return out, record
