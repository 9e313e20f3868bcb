"""The shares of a split: a given ratio checked, and whether ``ratio="auto"`` splits at all.

:func:`sizes_of` cuts the split axis by the shares.  :func:`plan_auto` predicts the time of each
target alone and of the balanced split (the part that finishes last, parts on one device
taking turns, with their transfers, plus cutting and joining) from tuned times or the
performance model, and declines the split, running the call on the better single target,
unless the split is predicted :data:`MARGIN` faster.  docs/split.md ("Declining a split that
would lose").
"""

from __future__ import annotations

import contextvars
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prism_core._pipeline.split.pinned import PINNED_FIXED_S, offers_pinned, staged_transfer_s
from prism_core.kernel.dispatch.ops import Op
from prism_core.kernel.dispatch.scope import SCOPE, Scope
from prism_core.kernel.errors import debug, did_you_mean
from prism_core.kernel.quantities import seconds_text

if TYPE_CHECKING:
    from prism_core._pipeline.split.layout import _Layout
    from prism_core._pipeline.split.targets import SplitTarget
    from prism_core._transfer_paths import TransferPath
    from prism_core._tuning.figures import Figures
    from prism_core._tuning.model import PerformanceModel
    from prism_core._tuning.tuning_entries import TuningRecords
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.description.device import DeviceDescription

#: How much faster than the better single target a split must be predicted to be kept: 20 %.
#: The calibrated model predicts sizes it was not fitted on within 12 to 30 % at the median
#: (docs/performance.md, "How good it is"), and an error of e in the slowest part's rate makes
#: the split about e slower, so a smaller predicted gain is within the model's error; what the
#: model does not see (a GPU's pageable copies and a CPU part contending for host memory
#: bandwidth, a loaded machine delaying one part's thread) only ever adds to the split.  At 20 %
#: a second target must be at least a quarter as fast as the first to be worth its thread.
MARGIN = 0.20

#: The split's own cost per part beyond the first: waking a thread, copying the caller's
#: context, the part's scope and its future.  Measured on the 2-CPU development host
#: (``exp`` of 64x64 across ``["numpy", "numpy"]`` with ``ratio=[1, 1]`` and
#: ``share_threads=False``: 193 µs against 36 µs on one target, 2026-12-07); faster hosts pay
#: less, and the margin covers that this is high for them.
PART_COST_S = 150e-6


# -- cutting ------------------------------------------------------------------------------------


def sizes_of(length: int, weights: Sequence[float]) -> list[int]:
    """``length`` cut in proportion to ``weights`` by largest remainder (Hamilton): the sizes
    sum to ``length`` exactly; ties go to the earlier target."""
    total = sum(weights)
    quotas = [length * w / total for w in weights]
    sizes = [math.floor(q) for q in quotas]
    left = length - sum(sizes)
    order = sorted(range(len(weights)), key=lambda i: (-(quotas[i] - sizes[i]), i))
    for i in order[:left]:
        sizes[i] += 1
    return sizes


def balance(length: int, fits: Sequence[tuple[float, float]]) -> list[float]:
    """Shares of ``length`` with which every part finishes at the same time, part ``i`` taking
    ``a + b * n`` seconds for ``n`` items; a target slower than the others even with nothing
    (its ``a`` beyond the common finish) gets nothing."""
    active = list(range(len(fits)))
    while active:
        inverse = sum(1 / fits[i][1] for i in active)
        finish = (length + sum(fits[i][0] / fits[i][1] for i in active)) / inverse
        n = {i: (finish - fits[i][0]) / fits[i][1] for i in active}
        if all(v > 0 for v in n.values()):
            return [max(n.get(i, 0.0), 0.0) for i in range(len(fits))]
        active = [i for i in active if n[i] > 0]
    return [1.0] * len(fits)


def dtype_of(args: Sequence[Any]) -> str | None:
    """The Prism data type of the first array among ``args`` (``None``: none, or unknown)."""
    from prism_core.kernel.description.dtypes import dtype as to_dtype

    for a in args:
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            try:
                return to_dtype(a.dtype).vocab
            except (TypeError, ValueError):
                return None
    return None


# -- ratios -------------------------------------------------------------------------------------


def _ratio(ratio: Any, n: int, name: str = "ratio") -> tuple[float, ...] | str | None:
    """``ratio`` (the argument ``name``) checked: ``None`` (even), ``"auto"``, or ``n``
    non-negative numbers with a positive sum, normalised to sum 1."""
    if ratio is None or (isinstance(ratio, str) and ratio == "auto"):
        return ratio
    if isinstance(ratio, str):
        raise ValueError(
            f"{name}={ratio!r} is not a ratio{did_you_mean(ratio, ['auto'])}; use a list of "
            "numbers, one per target, 'auto' or None (even)"
        )
    if not isinstance(ratio, (list, tuple)):
        raise TypeError(
            f"{name} must be a list of numbers (one per target), 'auto' or None; got {ratio!r} "
            f"({type(ratio).__name__})"
        )
    if len(ratio) != n:
        raise ValueError(
            f"{name} {list(ratio)} has {len(ratio)} entr{'y' if len(ratio) == 1 else 'ies'} for "
            f"{n} target{'s' * (n != 1)}; give one number per target"
        )
    values: list[float] = []
    for i, r in enumerate(ratio):
        try:  # an int beyond float's range is not a finite number either
            value = float(r) if isinstance(r, (int, float)) and not isinstance(r, bool) else None
        except OverflowError:
            value = None
        if value is None or not math.isfinite(value) or value < 0:
            raise ValueError(
                f"{name}[{i}] = {r!r}: each entry must be a finite number >= 0 (a share of the "
                "work; they need not sum to 1)"
            )
        values.append(value)
    top = max(values)
    if top <= 0:
        raise ValueError(f"{name} {list(ratio)} sums to 0: at least one target needs a share")
    # Scaled by the largest first: the sum of entries near float's maximum would overflow to
    # inf and every share come out 0.
    scaled = [v / top for v in values]
    total = sum(scaled)
    return tuple(v / total for v in scaled)


# -- the plan -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AutoPlan:
    """What ``ratio="auto"`` does with one call: the shares (``weights``, one per target),
    what gave them (``ratio_source``: ``"measured"``, ``"modelled"``, ``"even: <why>"``), and
    the decision in words (``"split: ..."``, ``"declined: ..."``, or why nothing was decided).
    ``chosen`` is the target a declined call runs on (``None``: it splits); ``split_s`` and
    ``single_s`` the predicted times (``None``: not predicted); ``backends`` the backend each
    target's whole call would run on (for the pinned check; ``None``: unknown or simulated).
    """

    weights: list[float]
    ratio_source: str
    decision: str
    chosen: int | None = None
    split_s: float | None = None
    single_s: tuple[float, ...] | None = None
    backends: tuple[str | None, ...] = ()


@dataclass
class _Costs:
    """Predicted seconds of ``n`` items of the call on each target (``time``), the device each
    target computes on (parts on one device take turns), and the shares to split by among some
    of the targets (``shares(active)``: 0 for the others)."""

    basis: str
    devices: list[str]
    time: Callable[[int, int], float]
    shares: Callable[[Sequence[int]], list[float]]


def _even(n: int, why: str) -> AutoPlan:
    return AutoPlan(
        [1.0] * n,
        f"even: {why}",
        f"kept even: nothing to predict with ({why}); without a prediction no single target "
        "can be told better, and an even split costs at most half of the slower one's time",
    )


def model_of(tuned: TuningRecords) -> PerformanceModel:
    """The performance model with the calibration ``prism bench`` stored (none if it is not
    usable), made once per set of records."""
    from prism_core._tuning.model import PerformanceModel

    cached = _MODEL[0] if _MODEL else None
    if cached is not None and cached[0] is tuned:
        return cached[1]
    try:
        model = PerformanceModel(tuned.calibration or None)
    except (TypeError, ValueError):
        model = PerformanceModel()
    _MODEL[:] = [(tuned, model)]
    return model


_MODEL: list[tuple[Any, PerformanceModel]] = []


def plan_auto(
    op: Op,
    targets: Sequence[SplitTarget],
    layout: _Layout,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    base: Scope,
    source: DeviceDescription | None,
    host: DeviceDescription | None,
    backends: Any,
) -> AutoPlan:
    """Shares for ``ratio="auto"``, and whether to split at all.

    The rates come from tuned throughputs where the tuner measured the variant every target
    runs (this op, dtype, nearest size), else from the performance model with the stored
    calibration (each target's time for ``n`` items as a fixed cost plus a cost per item,
    including moving the data from where it is: ``source``, ``None`` for host memory), else
    the split is even, saying why.  The split's predicted time is its slowest device's (the
    parts on one device add up: each alone already uses all of it), plus joining the parts and
    :data:`PART_COST_S` per extra part; each target's is that of the whole call there.  Unless
    the split is predicted :data:`MARGIN` faster than the better single target, it is declined
    and the whole call runs there.  ``host`` is this host's CPU (the join's bandwidth),
    ``backends`` the plugin set's backends by name (which offer pinned memory).

    Plans are kept per op, targets, shapes, dtype, argument types and other keywords, scope,
    where the data is, and tuning records, until anything is announced (plugins, devices or
    tuning reloaded): planning asks dispatch and the model about every target, about 0.25 ms,
    as much as the small calls a scope that splits with ``"auto"`` should decline.
    """
    from prism_core._tuning.tuning_records import records
    from prism_core.kernel import events as _events

    tuned = records()
    try:
        key: Any = (
            op.name,
            tuple(targets),
            layout.length,
            layout.shapes,
            layout.gather,
            dtype_of(args),
            tuple(type(a) for a in args),
            tuple(sorted((k, v) for k, v in kwargs.items() if not hasattr(v, "shape"))),
            tuple(type(v) for v in kwargs.values()),
            base,
            None if source is None else source.device_type,
            id(tuned),
            _events.generation(),
        )
        hash(key)
    except TypeError:  # a keyword that cannot be a key (a list): planned every time
        key = None
    if key is not None:
        with _PLANS_LOCK:
            kept = _PLANS.get(key)
        if kept is not None and kept[0] is tuned:
            return kept[1]
    plan = _plan(op, targets, layout, args, kwargs, base, source, host, backends, tuned)
    if key is not None:
        with _PLANS_LOCK:
            if len(_PLANS) >= _PLANS_KEPT:
                _PLANS.clear()  # (announcements leave stale keys behind: start afresh)
            _PLANS[key] = (tuned, plan)
    return plan


#: Plans by call (see :func:`plan_auto`), with the tuning records they were made from.
_PLANS: dict[Any, tuple[Any, AutoPlan]] = {}
_PLANS_LOCK = threading.Lock()
_PLANS_KEPT = 512


def _plan(
    op: Op,
    targets: Sequence[SplitTarget],
    layout: _Layout,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    base: Scope,
    source: DeviceDescription | None,
    host: DeviceDescription | None,
    backends: Any,
    tuned: TuningRecords,
) -> AutoPlan:
    from prism_core.kernel.dispatch.explain import explain

    n = len(targets)
    dtype = dtype_of(args)
    if dtype is None:
        return _even(n, "the arguments have no dtype to predict with")
    decisions = []
    for t in targets:
        scope = base.replace(**t.changes())

        def decide(scope: Scope = scope) -> Any:
            SCOPE.set(scope)
            return explain(op, *args, **kwargs)

        decisions.append(contextvars.copy_context().run(decide))
    chosen_backends = tuple(None if d.simulated else d.chosen_backend for d in decisions)
    model = model_of(tuned)
    costs = _measured(op, decisions, layout, dtype, tuned)
    if costs is None:
        found = _modelled(
            op, targets, decisions, layout, dtype, model, source, host, backends, chosen_backends
        )
        if isinstance(found, str):
            return _even(n, found)
        costs = found
    length = layout.length
    singles = tuple(costs.time(i, length) for i in range(n))
    best = min(range(n), key=lambda i: (singles[i], i))
    # One target per device, the fastest there: parts on one device would only take turns.
    fastest: dict[str, int] = {}
    for i in sorted(range(n), key=lambda i: (singles[i], i)):
        fastest.setdefault(costs.devices[i], i)
    weights = costs.shares(sorted(fastest.values()))
    sizes = sizes_of(length, weights) if length and sum(weights) > 0 else [0] * n
    running = [i for i in range(n) if sizes[i] > 0]
    per_device: dict[str, float] = {}
    for i in running:
        per_device[costs.devices[i]] = per_device.get(costs.devices[i], 0.0) + costs.time(
            i, sizes[i]
        )
    join = _join_s(op, layout, dtype, model, host) if len(running) > 1 else 0.0
    split_s = max(per_device.values(), default=0.0) + join + PART_COST_S * (len(running) - 1)
    versus = f"{targets[best].label} {seconds_text(singles[best])}"
    shared = len(fastest) < n
    if len(running) > 1 and split_s <= (1 - MARGIN) * singles[best]:
        turns = "; parts on one device would take turns: the fastest there runs them" * shared
        decision = (
            f"split: predicted {seconds_text(split_s)} vs {versus} alone "
            f"({costs.basis}; a split must be predicted {MARGIN:.0%} faster{turns})"
        )
        plan = AutoPlan(weights, costs.basis, decision, None, split_s, singles)
    else:
        if len(fastest) == 1:
            decision = (
                f"declined: every target computes on {costs.devices[best]}, where parts would "
                f"take turns; {versus} is the fastest there ({costs.basis})"
            )
        else:
            decision = (
                f"declined: predicted split {seconds_text(split_s)} vs {versus} "
                f"({costs.basis}; a split must be predicted {MARGIN:.0%} faster)"
            )
        weights = [1.0 if i == best else 0.0 for i in range(n)]
        plan = AutoPlan(weights, costs.basis, decision, best, split_s, singles)
    debug("split %s: %s", op.name, plan.decision)
    return AutoPlan(
        plan.weights,
        plan.ratio_source,
        plan.decision,
        plan.chosen,
        plan.split_s,
        plan.single_s,
        chosen_backends,
    )


def _elements(layout: _Layout, n: int) -> int:
    return sum(math.prod(s) for s in layout.part_shapes(n))


def _measured(
    op: Op, decisions: Sequence[Any], layout: _Layout, dtype: str, tuned: TuningRecords
) -> _Costs | None:
    """Costs from the tuner's measured times of each target's variant (the entry of the
    nearest size bucket for each size asked), or ``None`` when a target has none."""
    from prism_core._tuning.tuning_records import bucket_of

    found: list[list[Any]] = []
    for d in decisions:
        variant = d.executed
        entries = [
            e
            for e in tuned.for_op(op.name)
            if e.dtype == dtype and variant in e.times and not d.simulated
        ]
        if not entries:
            return None
        found.append(entries)

    def rate(i: int, elements: int) -> float:
        bucket = bucket_of(elements)
        entry = min(found[i], key=lambda e: (abs(e.bucket - bucket), e.bucket))
        done = sum(math.prod(s) for s in entry.shapes) or 1
        return float(done / entry.times[decisions[i].executed])

    def time(i: int, n: int) -> float:
        elements = _elements(layout, n)
        return elements / rate(i, elements) if n > 0 else 0.0

    def shares(active: Sequence[int]) -> list[float]:
        even = _elements(layout, max(layout.length // max(len(active), 1), 1))
        return [rate(i, even) if i in active else 0.0 for i in range(len(decisions))]

    devices = [str(min(found[i], key=lambda e: e.bucket).device) for i in range(len(found))]
    return _Costs("measured", devices, time, shares)


def _modelled(
    op: Op,
    targets: Sequence[SplitTarget],
    decisions: Sequence[Any],
    layout: _Layout,
    dtype: str,
    model: PerformanceModel,
    source: DeviceDescription | None,
    host: DeviceDescription | None,
    backends: Any,
    chosen_backends: Sequence[str | None],
) -> _Costs | str:
    """Costs from the model: each target's time at the whole length and at half of it, as a
    fixed cost plus a cost per item (shares that finish every part together), or why not."""
    from prism_core._transfer_paths import transfer_path
    from prism_core._tuning.model import ModelError
    from prism_core.kernel.devices import default_library

    length = max(layout.length, 1)
    half = max(length // 2, 1)
    fits: list[tuple[float, float]] = []
    devices: list[str] = []
    for t, d, name in zip(targets, decisions, chosen_backends, strict=True):
        device = d.chosen_device or t.device
        if device is None:
            return f"{t.label} runs on no described device"
        desc = t.description if t.description is not None else default_library().get(device)
        # From host memory the model's own transfer applies (its host link one way, or what
        # `prism bench` calibrated), or the pinned one where staging pays; from a device, the
        # path the topology gives.
        path = None if source is None else transfer_path(source, desc)
        backend = backends.get(name) if name is not None and source is None else None
        try:
            full = _predict(op, layout, length, dtype, desc, model, source, path, backend, host)
            some = _predict(op, layout, half, dtype, desc, model, source, path, backend, host)
        except (ModelError, ValueError, TypeError) as exc:
            return f"the model cannot predict {t.label}: {exc}"
        slope = (full - some) / (length - half) if length > half else full / length
        if slope <= 0:
            slope = full / length
        fits.append((max(full - slope * length, 0.0), slope))
        devices.append(desc.device_type)

    def time(i: int, n: int) -> float:
        return fits[i][0] + fits[i][1] * n if n > 0 else 0.0

    def shares(active: Sequence[int]) -> list[float]:
        found = dict(zip(active, balance(layout.length, [fits[i] for i in active]), strict=True))
        return [found.get(i, 0.0) for i in range(len(fits))]

    return _Costs("modelled", devices, time, shares)


def _predict(
    op: Op,
    layout: _Layout,
    n: int,
    dtype: str,
    desc: DeviceDescription,
    model: PerformanceModel,
    source: DeviceDescription | None,
    path: TransferPath | None,
    backend: Backend | None,
    host: DeviceDescription | None,
) -> float:
    """Seconds of ``n`` items on ``desc``, with moving the data there and back."""
    shapes = layout.part_shapes(n)
    if source is not None:
        p = model.predict(op.name, shapes, dtype, desc, on_device=True)
        return p.seconds + transfer_or_assumed(path, p.work.moved_bytes)
    p = model.predict(op.name, shapes, dtype, desc, on_device=desc.kind == "cpu")
    if p.transfer_s > 0 and backend is not None and offers_pinned(backend):
        in_bytes = _in_bytes(shapes, p)
        staged = staged_transfer_s(p.figures, figures_of(model, host), in_bytes, p.work.moved_bytes)
        if staged is not None and staged + PINNED_FIXED_S < p.transfer_s:
            return p.seconds - p.transfer_s + staged + PINNED_FIXED_S
    return p.seconds


def _in_bytes(shapes: Sequence[tuple[int, ...]], p: Any) -> float:
    from prism_core.kernel.description.dtypes import dtype as to_dtype

    known = getattr(p.work, "in_bytes", None)  # the model's, where the work says
    if known is not None:
        return float(known)
    itemsize = to_dtype(p.dtype).itemsize
    return float(min(sum(math.prod(s) for s in shapes) * itemsize, p.work.moved_bytes))


def figures_of(model: PerformanceModel, desc: DeviceDescription | None) -> Figures | None:
    if desc is None:
        return None
    try:
        return model.figures(desc)
    except (ValueError, TypeError, LookupError):
        return None


def transfer_or_assumed(path: TransferPath | None, nbytes: float) -> float:
    """Seconds to move ``nbytes`` along ``path``; where a link on it is not described, over
    the host link the model assumes (PCIe 4.0 x16, one way)."""
    from prism_core._tuning.figures import ASSUMED_HOST_LINK_GBPS

    if path is None:
        return nbytes / (ASSUMED_HOST_LINK_GBPS * 1e9)
    return path.seconds(nbytes)


def _join_s(
    op: Op, layout: _Layout, dtype: str, model: PerformanceModel, host: DeviceDescription | None
) -> float:
    """Seconds to join the parts: their results are copied once into the whole (read and
    written) at the host's memory bandwidth; ``0`` where the output or bandwidth is unknown."""
    from prism_core._tuning.work import work_of
    from prism_core.kernel.description.dtypes import dtype as to_dtype

    fig = figures_of(model, host)
    if fig is None or not fig.bandwidth_gbps:
        return 0.0
    dt = to_dtype(dtype)
    shapes = layout.part_shapes(layout.length)
    try:
        work = work_of(op.name, shapes, dt.itemsize, complex_input=dt.kind == "c")
    except (ValueError, TypeError):
        return 0.0
    if work is None:
        return 0.0
    out_bytes = getattr(work, "out_bytes", None)
    if out_bytes is None:
        out_bytes = max(work.moved_bytes - sum(math.prod(s) for s in shapes) * dt.itemsize, 0.0)
    return 2 * out_bytes / (fig.bandwidth_gbps * 1e9)
