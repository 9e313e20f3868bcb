"""The autotuner: measure the variants a call chooses among, keep the winner per size.

After FFTW's planner (what it measures is kept, as wisdom, in the tuning cache), cuDNN's
benchmark mode and ONNX Runtime's TunableOp (the fastest kept per size, here on request or on
first use: :func:`set_autotune`).  Made for a noisy, shared machine: a warm-up, samples sized to
the call, interleaved rounds in a shuffled order, the minimum over rounds, and a significance
test on paired rounds, so that a choice changes only when the gap is real.  The method and its
thresholds: docs/performance.md, "Measuring (``prism.tuning.tune``, ``prism tune``,
``prism bench``)"; what it achieves: "The goals of choosing by measurement, measured".

What a measurement decides is ``measurements.py``'s, the cases and reports ``tune_report.py``'s,
placed functions' protocol ``function_tuning.py``'s.  Everything that reads the clock stays
here, so that one ``time`` times the rounds, the budgets and the deadlines alike.
"""

from __future__ import annotations

import math
import random
import statistics
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from prism_core._tuning.candidates import Candidates, Runner, candidates
from prism_core._tuning.function_tuning import FunctionTuning, Tunable
from prism_core._tuning.measurements import Measurement, decide
from prism_core._tuning.tune_report import Keeper, TuneCase, TuneReport
from prism_core.kernel.dispatch.catalogue import SPECS
from prism_core.kernel.dispatch.ops import (  # ops.py installs the op functions
    OperationError,
    all_ops,
    as_op,
)
from prism_core.kernel.errors import PrismError, describe_exception
from prism_core.kernel.public import home
from prism_core.kernel.quantities import bytes_text

if TYPE_CHECKING:
    from prism_core.kernel.op_examples import Examples

__all__ = [
    "BUILTIN_EXAMPLES",
    "EXAMPLES",
    "TuningError",
    "autotune_settings",
    "check_size",
    "declared_examples",
    "example_arguments",
    "example_bytes",
    "measure",
    "set_autotune",
    "share",
    "tune",
    "tune_case",
    "tune_function",
    "tune_on_first_use",
    "tune_request",
]


#: The builtin ops whose records carry example arguments (``OpRecord.examples``), by name.
BUILTIN_EXAMPLES: dict[str, Examples] = {r.name: r.examples for r in SPECS if r.examples}
#: Builtin ops whose example arguments :func:`example_arguments` makes from a size ``n``, and
#: what ``n`` means.  An op a plugin declares carries its own
#: (``operation(..., examples=Examples(...))``: :func:`declared_examples`).
EXAMPLES: dict[str, str] = {name: e.size for name, e in BUILTIN_EXAMPLES.items()}


@home("prism_core.tuning")
class TuningError(PrismError, ValueError):
    """The tuner was asked for something it cannot measure (an unknown op, no sizes or example
    arguments, a bad option); the message says what would be accepted."""


# -- measuring --------------------------------------------------------------------------------


def _timed(run: Callable[[], Any], number: int) -> float:
    """Seconds per call of ``number`` calls of ``run``."""
    clock = time.perf_counter
    start = clock()
    for _ in range(number):
        run()
    return (clock() - start) / number


def measure(
    runners: Sequence[Runner],
    *,
    budget_s: float = 1.0,
    sample_s: float = 0.002,
    min_rounds: int = 5,
    max_rounds: int = 25,
    deadline: float | None = None,
    seed: int = 0,
) -> list[Measurement]:
    """Time each runner: warm-up, a sample size per runner, then interleaved rounds.

    A :class:`PreparedRunner`'s ``setup`` is called before each call, outside the timed
    region: a placed function is timed on fresh copies of its arguments every time, one call
    per sample (a body that updates its arguments in place, run again on what it left, could
    fail, or slow down on the infinities it made).

    Rounds continue until ``budget_s`` is spent (at least ``min_rounds``, at most
    ``max_rounds``).  ``deadline`` (a ``time.perf_counter()`` value) is a hard stop: past it no
    further round starts, even below ``min_rounds`` (tuning on first use must not hold a
    call up); a runner with fewer than 3 rounds then has no time (``error`` says why).
    A runner that raises is timed no further; its ``error`` says what it raised.
    """
    errors: dict[str, str] = {}
    numbers: dict[str, int] = {}
    first_calls: dict[str, float] = {}
    start = time.perf_counter()
    for r in runners:
        if deadline is not None and time.perf_counter() > deadline:
            errors[r.variant] = "not timed: the time budget ran out"
            continue
        try:
            # Warm-up: imports, plans, caches, thread pools, page faults of the first large
            # arrays.  A thread pool can take a few dozen calls to settle (torch's, on a busy
            # machine): warm up for a tenth of the budget (at most 50 ms), at least one call.
            warm_until = time.perf_counter() + min(0.1 * budget_s, 0.05)
            if deadline is not None:
                warm_until = min(warm_until, deadline)
            setup = getattr(r, "setup", None)  # a PreparedRunner: fresh arguments
            if setup is not None:
                setup()
            first = _timed(r.run, 1)
            if r.compiles:
                first_calls[r.variant] = first  # a compilation at this shape, reported apart
            while time.perf_counter() < warm_until:
                if setup is not None:
                    setup()
                r.run()
            if setup is not None:
                setup()
            once = max(_timed(r.run, 1), 1e-8)
        except Exception as exc:  # a variant that fails is not a candidate; say why
            errors[r.variant] = describe_exception(exc)
            continue
        numbers[r.variant] = 1 if setup is not None else max(1, min(100_000, int(sample_s / once)))
    live = [r for r in runners if r.variant in numbers]
    samples: dict[str, list[float]] = {r.variant: [] for r in live}
    rng = random.Random(seed)
    rounds = 0
    round_cost = 0.0
    while live and rounds < max_rounds:
        now = time.perf_counter()
        if deadline is not None and now + round_cost > deadline:
            break
        if rounds >= min_rounds and now - start + round_cost > budget_s:
            break
        began = now
        order = list(live)
        rng.shuffle(order)
        for r in order:
            try:
                setup = getattr(r, "setup", None)
                if setup is not None:
                    setup()  # outside the timed region
                samples[r.variant].append(_timed(r.run, numbers[r.variant]))
            except Exception as exc:
                errors[r.variant] = describe_exception(exc)
        live = [r for r in live if r.variant not in errors]
        round_cost = time.perf_counter() - began
        rounds += 1
    out = []
    for r in runners:
        got = samples.get(r.variant, [])
        error = errors.get(r.variant)
        if error is None and len(got) < 3:
            error = f"not timed: {len(got)} round(s) in the time budget, 3 needed"
        if error is not None:
            out.append(
                Measurement(
                    r.variant, r.backend, r.device, math.inf, math.inf, tuple(got), 0, error
                )
            )
        else:
            out.append(
                Measurement(
                    r.variant,
                    r.backend,
                    r.device,
                    min(got),
                    statistics.median(got),
                    tuple(got),
                    numbers[r.variant],
                    first_call=first_calls.get(r.variant),
                )
            )
    return out


def _merged(first: Measurement, more: Measurement) -> Measurement:
    """One variant's measurement over the rounds of two passes."""
    if first.error is not None or more.error is not None:
        return first if more.error is not None else more
    samples = first.samples + more.samples
    return Measurement(
        first.variant, first.backend, first.device, min(samples), statistics.median(samples),
        samples, first.calls_per_sample, first_call=first.first_call,
    )  # fmt: skip


# -- example arguments ------------------------------------------------------------------------


def declared_examples() -> dict[str, Examples]:
    """The ops that carry their example arguments (declared by plugins with
    ``operation(..., examples=...)``), by name."""
    return {
        name: op.examples
        for name, op in all_ops().items()
        if op.examples is not None and name not in BUILTIN_EXAMPLES
    }


def _examples_of(op: str) -> Examples:
    """The examples of ``op``: its record's (:data:`EXAMPLES`), or those it carries; a
    :class:`TuningError` for an op with none."""
    if op in BUILTIN_EXAMPLES:
        return BUILTIN_EXAMPLES[op]
    try:
        examples = as_op(op).examples
    except OperationError:
        examples = None
    if examples is None:
        known = sorted({*EXAMPLES, *declared_examples()})
        raise TuningError(
            f"no example arguments for {op!r}: sizes= works for {', '.join(known)}; for "
            f"another op give example arrays, as in prism.tune({op!r}, a, b)"
        )
    return examples


def example_arguments(
    op: str, n: int, dtype: str = "float64", *, batch: int | None = None
) -> tuple[Any, ...]:
    """NumPy arguments of size ``n`` for one of the ops in :data:`EXAMPLES`, or of an op that
    carries its examples (:func:`declared_examples`).

    For an op whose examples fix the arguments' types (``Examples.dtype_label``) ``dtype`` is
    not used; ``batch`` is the number of items of an op whose examples are batches (its
    ``Examples.batch`` by default).  A size whose arrays (:func:`example_bytes`) need more
    memory than this process has available is refused before anything is allocated.
    """
    examples = _examples_of(op)
    _example_kind(op, n, dtype, batch, examples)
    _check_fits(op, n, dtype, batch, examples)
    try:
        return tuple(examples.make(n, dtype, _batch(examples, batch)))
    except MemoryError:
        raise TuningError(
            f"sizes: {_size_label(op, n, dtype, examples)} needs "
            f"{bytes_text(example_bytes(op, n, dtype, batch=batch))} for its arrays, and they "
            "could not be allocated; give a smaller size"
        ) from None


def _batch(examples: Examples, batch: int | None) -> int | None:
    """The number of items ``make`` receives: ``batch``, else the examples' default."""
    return examples.batch if batch is None else batch


def _example_kind(op: str, n: int, dtype: str, batch: int | None, examples: Examples | None) -> Any:
    """The NumPy dtype of ``op``'s example arrays (``None`` where the examples fix their
    types), once ``n``, ``dtype`` and ``batch`` are known to be good."""
    import numpy as np

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise TuningError(f"sizes: each size must be a positive integer; got {n!r}")
    if examples is not None and examples.batch is not None:
        items = _batch(examples, batch)
        if isinstance(items, bool) or not isinstance(items, int) or items < 1:
            raise TuningError(f"batch: expected a positive number of items; got {batch!r}")
    if examples is not None and examples.dtype_label is not None:
        return None
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TuningError(
            f"dtype: {dtype!r} is not a NumPy dtype name (float32, float64, ...)"
        ) from None


def example_bytes(op: str, n: int, dtype: str = "float64", *, batch: int | None = None) -> int:
    """Bytes of the arrays of one call of ``op`` at size ``n``: its :func:`example_arguments`
    and its result.

    ``n`` is the side of ``n x n`` matrices for matmul, linalg.svd and linalg.solve, the length
    of the vectors for add and fft.fft (:data:`EXAMPLES`), and what its examples say for an op
    that carries them (``Examples.size``; they count the bytes too).  The call's own
    temporaries (a LAPACK workspace) are not counted: this is the least the call needs.
    """
    examples = _examples_of(op)
    _example_kind(op, n, dtype, batch, examples)
    return int(examples.nbytes(n, dtype, _batch(examples, batch)))


def check_size(op: Any, n: Any, dtype: str) -> None:
    """Raise the :class:`TuningError` that ``tune(op, sizes=[n], dtypes=[dtype])`` would raise
    for this size before measuring anything (see :func:`example_arguments`)."""
    name = as_op(op).name
    examples = _examples_of(name)
    _example_kind(name, n, dtype, None, examples)
    _check_fits(name, n, dtype, None, examples)


def _size_label(op: str, n: int, dtype: str, examples: Examples | None) -> str:
    fixed = examples is not None and examples.dtype_label is not None
    return f"{op} n={n}" if fixed else f"{op} n={n} {dtype}"


def _check_fits(op: str, n: int, dtype: str, batch: int | None, examples: Examples) -> None:
    """Refuse a size whose arrays need more memory than this process has available: it would
    fail to allocate, or take the machine's memory until the system kills the process."""
    from prism_core._host_report import available_memory_bytes

    needs = example_bytes(op, n, dtype, batch=batch)
    available = available_memory_bytes()
    if available is None or needs <= available:
        return
    fits, too_big = 0, n  # the largest size that fits, by bisection
    while too_big - fits > 1:
        mid = (fits + too_big) // 2
        if example_bytes(op, mid, dtype, batch=batch) <= available:
            fits = mid
        else:
            too_big = mid
    what = examples.size
    raise TuningError(
        f"sizes: {_size_label(op, n, dtype, examples)} needs {bytes_text(needs)} for {what} "
        f"and the result, more than the {bytes_text(available)} of memory available; give a "
        "smaller size " + (f"(at most n={fits} fits)" if fits else "(none fits in that memory)")
    )


# -- tuning -----------------------------------------------------------------------------------


def tune_case(
    op: Any,
    args: Sequence[Any],
    kwargs: dict[str, Any] | None = None,
    *,
    budget_s: float = 1.0,
    deadline: float | None = None,
    threshold: float = 0.05,
    min_rounds: int = 5,
    found: Candidates | None = None,
) -> tuple[TuneCase, Any]:
    """Measure one call's candidates (``found``, when the caller has them already); the case
    and the tuning entry to store (or ``None``).  ``min_rounds``: more rounds where the
    machine is busy."""
    from prism_core._tuning.tuning_entries import TuningEntry

    if found is None:
        found = candidates(op, args, kwargs)
    shapes = tuple(
        tuple(int(d) for d in getattr(a, "shape", ())) for a in args if hasattr(a, "shape")
    )
    declared = found.runners[0].variant if found.runners else None
    if len(found.runners) < 2:
        decided = "only" if found.runners else "failed"
        case = TuneCase(
            found.op, shapes, found.dtype, found.bucket, found.devices, (),
            declared, declared, decided, 0.0, found.skipped,
        )  # fmt: skip
        return case, None
    rounds = {"min_rounds": min_rounds, "max_rounds": max(25, 2 * min_rounds)}
    ms = measure(found.runners, budget_s=budget_s, deadline=deadline, **rounds)
    timed = [m for m in ms if m.error is None]
    if not timed:
        case = TuneCase(
            found.op, shapes, found.dtype, found.bucket, found.devices, tuple(ms),
            declared, None, "failed", 0.0, found.skipped,
        )  # fmt: skip
        return case, None
    assert declared is not None
    winner, decided, gap = decide(ms, declared, threshold=threshold)
    if decided != "measured" and gap >= threshold and len(timed) >= 2:
        # Undecided although the minimum shows a gap: the machine was noisy while it was
        # measured.  Measure the two variants in question once more (rounds interleaved as
        # before) and decide on every round of both passes.
        best = min(timed, key=lambda m: m.seconds).variant
        again = [r for r in found.runners if r.variant in (declared, best)]
        more = {
            m.variant: m
            for m in measure(again, budget_s=budget_s, deadline=deadline, seed=1, **rounds)
        }
        ms = [_merged(m, more[m.variant]) if m.variant in more else m for m in ms]
        timed = [m for m in ms if m.error is None]
        winner, decided, gap = decide(ms, declared, threshold=threshold)
    case = TuneCase(
        found.op, shapes, found.dtype, found.bucket, found.devices, tuple(ms),
        declared, winner, decided, gap, found.skipped,
    )  # fmt: skip
    if found.dtype is None or len(timed) < 2:
        return case, None
    entry = TuningEntry(
        op=found.op,
        device=found.devices,
        dtype=found.dtype,
        bucket=found.bucket,
        variants=found.variants,
        times={m.variant: m.seconds for m in timed},
        winner=winner,
        decided=decided,
        shapes=shapes,
        repeats=min(len(m.samples) for m in timed),
        measured_at=time.time(),
    )
    return case, entry


def _sizes(sizes: Any) -> list[int]:
    if isinstance(sizes, int) and not isinstance(sizes, bool):
        return [sizes]
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Iterable):
        raise TuningError(
            f"sizes: expected a size or a list of sizes such as [64, 256]; got {sizes!r}"
        )
    out = list(sizes)
    if not out:
        raise TuningError("sizes: the list is empty; give at least one size, such as [256]")
    return out


def tune(
    op: Any,
    *example_args: Any,
    sizes: Any = None,
    dtypes: Sequence[str] = ("float64",),
    budget_s: float | None = None,
    store: Any = None,
    record: bool = True,
    progress: Callable[[int, int, str], None] | bool | None = None,
    deadline: float | None = None,
) -> TuneReport:
    """Measure the variants of ``op`` that dispatch chooses among, and store the winners.

    ``op`` may also be a placed function (``prism_core.function``; any :class:`Tunable`):
    ``tune(F, *args)`` times the backends that can run ``F(*args)`` (:func:`tune_function`).

    Either give example arguments (``prism.tune("matmul", a, b)``: that call's size bucket is
    tuned), or ``sizes`` (and ``dtypes``) for the ops that have example arguments
    (:data:`EXAMPLES`: matmul, fft.fft, linalg.svd, linalg.solve, add; and the ops that carry
    theirs, :func:`declared_examples`).  Each case gets about
    a second of measuring (at least 5 rounds each); ``budget_s`` caps the whole call: the
    cases share it, and none is measured past it (a case it leaves no time for says "not
    timed").  ``deadline`` (a ``time.perf_counter()`` value) ends a budget that began before
    the call (``prism tune`` counts its ``--budget`` from the command's start): nothing is
    measured past it; with ``budget_s``, the earlier end holds.  The winners go to the tuning
    cache (``store``: a ``TuningStore``; default the host's) unless ``record`` is false;
    dispatch uses them from then on, in this process and in later ones.  Each case's winner
    is stored as soon as it is measured: an interrupt (``KeyboardInterrupt``) loses no case
    already measured.  What could not be written is counted in the report's ``unstored``.
    ``progress``: ``None`` shows a progress bar on standard error when it is a terminal,
    ``True`` always (plain lines when it is not a terminal), ``False`` never; or a function
    called as ``progress(done, total, label)``.
    """
    import sys

    from prism_core._tuning.progress import Progress

    if isinstance(op, Tunable):
        if sizes is not None:
            raise TuningError("a placed function is tuned on example arguments, not sizes=")
        return tune_function(
            op, example_args, budget_s=budget_s, store=store, record=record, deadline=deadline
        )
    the_op = as_op(op)
    _check_budget(budget_s)
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float, type(None))):
        raise TuningError(f"deadline: expected a time.perf_counter() value; got {deadline!r}")
    calls: list[tuple[tuple[Any, ...], str]] = []
    if example_args and sizes is not None:
        raise TuningError("give example arguments or sizes=, not both")
    if example_args:
        calls.append((tuple(example_args), "the example arguments"))
    elif sizes is not None:
        if isinstance(dtypes, str):
            dtypes = (dtypes,)
        examples = _examples_of(the_op.name)
        if examples is not None and examples.dtype_label is not None:
            dtypes = dtypes[:1]  # the examples fix the arguments' types: one case per size
        for dtype in dtypes:
            for n in _sizes(sizes):
                label = _size_label(the_op.name, n, dtype, examples).partition(" ")[2]
                calls.append((example_arguments(the_op.name, n, dtype), label))
    else:
        known = sorted({*EXAMPLES, *declared_examples()})
        raise TuningError(
            f"tune({the_op.name!r}): give example arguments (prism.tune({the_op.name!r}, a, b)) "
            f"or sizes=[...] for {', '.join(known)}"
        )
    began = time.perf_counter()
    if budget_s is not None:
        deadline = min(began + float(budget_s), math.inf if deadline is None else deadline)
    shown: Progress | None = None
    if progress is False:
        shown = progress = Progress(sys.stderr, "off")
    elif progress is None or progress is True:
        shown = progress = Progress.auto(
            sys.stderr, lines=progress is True, prefix="prism.tune: ", deadline=deadline
        )
    cases: list[TuneCase] = []
    keeper = Keeper(store if record else False)
    try:
        for i, (args, label) in enumerate(calls):
            progress(i, len(calls), f"{the_op.name} {label}")
            budget, stop = share(deadline, len(calls) - i)
            case, entry = tune_case(the_op, args, budget_s=budget, deadline=stop)
            cases.append(case)
            if entry is not None:
                keeper.keep([entry])
        progress(len(calls), len(calls), the_op.name)
    finally:
        if shown is not None:
            shown.close()
    stored, unstored, path, problems = keeper.outcome()
    return TuneReport(tuple(cases), stored, path, problems, time.perf_counter() - began, unstored)


def tune_function(
    fn: Tunable,
    args: Sequence[Any],
    kwargs: dict[str, Any] | None = None,
    *,
    budget_s: float | None = None,
    store: Any = None,
    record: bool = True,
    deadline: float | None = None,
) -> TuneReport:
    """Time the placements of a placed function's call ``fn(*args, **kwargs)`` (its backends,
    each running the whole body on fresh copies of the arguments) with the ops' machinery —
    interleaved rounds, the minimum, the paired sign test, a tie within the noise keeping the
    declared order — and store the winner in the tuning cache (docs/functions.md, "Choosing
    by measurement").  A backend that declines the body (JAX for a body that updates its
    arguments) is reported as declined, not timed."""
    _check_budget(budget_s)
    began = time.perf_counter()
    # Judging the backends may import their frameworks: the budget is for measuring.
    request = fn.__prism_tune__(tuple(args), dict(kwargs or {}))
    if budget_s is not None:
        start = time.perf_counter()
        deadline = min(start + float(budget_s), math.inf if deadline is None else deadline)
    budget, stop = share(deadline, 1)
    case, entry = tune_request(request, budget_s=budget, deadline=stop)
    keeper = Keeper(store if record else False)
    if entry is not None:
        keeper.keep([entry])
    stored, unstored, path, problems = keeper.outcome()
    return TuneReport((case,), stored, path, problems, time.perf_counter() - began, unstored)


def tune_request(
    request: FunctionTuning, *, budget_s: float, deadline: float | None
) -> tuple[TuneCase, Any]:
    """Measure a :class:`FunctionTuning`'s runners as :func:`tune_case` measures an op's; the
    case and the entry to store (``None``: nothing to store).  Backends declined while
    measuring are moved from the measurements to ``skipped`` and left out of the entry."""
    shapes = request.shapes
    case, entry = tune_case(
        None, (), budget_s=budget_s, deadline=deadline, found=request.candidates()
    )
    case = replace(case, shapes=shapes)
    declined = dict(request.declined)
    if not declined:
        return case, None if entry is None else replace(entry, shapes=shapes)
    measurements = tuple(m for m in case.measurements if m.variant not in declined)
    skipped = case.skipped + tuple(f"{b}: declined: {why}" for b, why in declined.items())
    variants = tuple(v for v in request.variants if v not in declined)
    timed = [m for m in measurements if m.error is None]
    if not timed:
        return replace(case, measurements=measurements, skipped=skipped, decided="failed"), None
    winner, decided = case.winner, case.decided
    if winner is None or winner in declined:
        best = min(timed, key=lambda m: m.seconds)
        winner, decided = best.variant, "measured"
    case = replace(case, measurements=measurements, skipped=skipped, winner=winner, decided=decided)
    if entry is None or len(timed) < 2:  # fewer timed now than when tune_case kept none
        return case, None
    # The entry tune_case made (the request's key, devices, signature and bucket), without the
    # declined backends.
    return case, replace(
        entry,
        variants=variants,
        times={m.variant: m.seconds for m in timed},
        winner=winner,
        decided=decided,
        shapes=shapes,
        repeats=min(len(m.samples) for m in timed),
    )


def _check_budget(budget_s: Any) -> None:
    if budget_s is not None and not (
        isinstance(budget_s, (int, float)) and not isinstance(budget_s, bool) and budget_s > 0
    ):
        raise TuningError(f"budget_s: expected a positive number of seconds; got {budget_s!r}")


#: Seconds of measuring per case when no budget caps the run (``prism.tune``, ``prism tune``).
PER_CASE_S = 1.0


def share(
    deadline: float | None, left: int, per_case: float = PER_CASE_S
) -> tuple[float, float | None]:
    """``(budget_s, deadline)`` for the next of ``left`` cases: about ``per_case`` seconds of
    measuring (less where its even share of what is left before the run's ``deadline`` is
    less), and a hard stop at the end of that share, so that no case takes the time of those
    after it (time a case leaves unused goes to the others)."""
    if deadline is None:
        return per_case, None
    now = time.perf_counter()
    fair = max((deadline - now) / max(left, 1), 0.0)
    return min(per_case, fair), now + fair


# -- tuning on first use ----------------------------------------------------------------------


@dataclass
class _FirstUse:
    enabled: bool = False
    budget_s: float = 0.2
    busy: set[Any] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


_first_use = _FirstUse()
_tuning_now = threading.local()


def set_autotune(first_use: bool, *, budget_ms: float = 200.0) -> None:
    """Turn tuning on first use on or off (off by default).

    When on, the first call of an op at a size bucket (per dtype and device set) that has no
    tuned times measures its candidates before running, for at most ``budget_ms``
    milliseconds of measuring (what cannot be timed in the budget is not stored, and the
    declared order stands), stores the winner in the tuning cache and runs the call on it.
    Later calls of that size are cached plans, as before.  Dispatch keys then hold the size
    bucket of every op, so that each new size is tuned.  Calls that arrive while another
    thread tunes the same op and size run in the declared order without waiting.  Placed
    functions (``prism_core.function``) follow the same switch: :func:`tune_on_first_use`.
    """
    from prism_core.kernel.dispatch import ranking, registry

    if not isinstance(first_use, bool):
        raise TuningError(f"first_use: expected True or False; got {first_use!r}")
    if isinstance(budget_ms, bool) or not isinstance(budget_ms, (int, float)) or not budget_ms > 0:
        raise TuningError(
            f"budget_ms: expected a positive number of milliseconds; got {budget_ms!r}"
        )
    with _first_use.lock:
        _first_use.enabled = first_use
        _first_use.budget_s = budget_ms / 1e3
        _first_use.busy.clear()
        ranking.set_first_use(_on_first_use if first_use else None)
    registry.key_every_size(first_use)


def autotune_settings() -> dict[str, Any]:
    """Whether tuning on first use is on, and its budget."""
    return {"first_use": _first_use.enabled, "budget_ms": _first_use.budget_s * 1e3}


def _on_first_use(op: Any, key: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    if getattr(_tuning_now, "active", False):
        return False  # a variant calling another op while being measured: no nested tuning
    with _first_use.lock:
        if key in _first_use.busy:
            return False  # another thread is tuning this call; run in the declared order
        _first_use.busy.add(key)
    _tuning_now.active = True
    try:
        budget = _first_use.budget_s
        deadline = time.perf_counter() + budget
        try:
            _case, entry = tune_case(op, args, kwargs, budget_s=budget, deadline=deadline)
        except Exception:  # a failure to tune never fails the call: it runs untuned
            return False
        if entry is None:
            return False
        Keeper(None).keep([entry])
        return True
    finally:
        _tuning_now.active = False
        # Stays busy when nothing was stored, so that this size is not measured again and
        # again; cleared by set_autotune.
        if _first_use.enabled is False:
            _first_use.busy.discard(key)


def tune_on_first_use(fn: Tunable, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Tuning on first use for a placed function (:func:`set_autotune`): when it is on, the
    first call of a signature with no stored winner measures its placements within the
    budget, on copies of the arguments, and stores the winner; whether it stored one.  Calls
    that arrive while another thread tunes the same signature run untuned without waiting;
    a failure to tune never fails the call."""
    if not _first_use.enabled or getattr(_tuning_now, "active", False):
        return False
    _tuning_now.active = True  # the body's own ops are not tuned meanwhile
    key: Any = None
    try:
        request = fn.__prism_tune__(args, kwargs)
        if len(request.runners) < 2:
            return False
        key = ("function", request.key, request.signature, request.bucket, request.devices)
        with _first_use.lock:
            if key in _first_use.busy:
                key = None
                return False
            _first_use.busy.add(key)
        budget = _first_use.budget_s  # from here: judging the backends is not measuring
        _case, entry = tune_request(request, budget_s=budget, deadline=time.perf_counter() + budget)
        if entry is None:
            return False
        Keeper(None).keep([entry])
        return True
    except Exception:  # a failure to tune never fails the call: it runs untuned
        return False
    finally:
        _tuning_now.active = False
        if key is not None and _first_use.enabled is False:
            _first_use.busy.discard(key)
