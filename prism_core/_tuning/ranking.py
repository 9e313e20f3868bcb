"""Prism's own ranking (the kernel's default ranker, where no plugin ranks): a plan's eligible
candidates ordered by tuned times (the tuner's records), by the performance model's predictions
across devices, or by an execution policy's limits and priorities, and ``execution_policy()``,
which puts a policy in force.  docs/performance.md says when each applies; the extension point
it fills is ``prism_core.kernel.dispatch.ranking`` (a :class:`prism_core.extending.Ranker`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prism_core.kernel.contract.extension_points import Ranked, Ranker, RankRequest
from prism_core.kernel.dispatch.arguments import elements, tuning_dtype
from prism_core.kernel.dispatch.decision import Basis
from prism_core.kernel.dispatch.ranking import first_use
from prism_core.kernel.dispatch.scope import ScopeBlock
from prism_core.kernel.quantities import seconds_text

if TYPE_CHECKING:
    from prism_core._tuning.execution_policy import ExecutionPolicy
    from prism_core._tuning.model import PerformanceModel
    from prism_core._tuning.predictions import PerformanceRow, Prediction
    from prism_core._tuning.tuning_entries import TuningEntry, TuningRecords
    from prism_core.kernel.contract.extension_points import Ranking

__all__ = [
    "NOT_TUNED",
    "MeasuredRanking",
    "calibrated_text",
    "execution_policy",
    "model_for",
    "tuned_records",
]

NOT_TUNED = "not tuned"


class MeasuredRanking(Ranker):
    """The ranker Prism installs (``prism_ranker``): tuned times, then the model, under the
    execution policy in force."""

    def rank(self, request: RankRequest) -> Ranked:
        order, basis = by_measurement(request)
        return Ranked(
            order,
            basis,
            untuned=basis.note.startswith(NOT_TUNED),
            # Predicted times and policies depend on the size: key the op's plans by size.
            by_size=basis.decided_by == "modelled" or request.scope.execution is not None,
        )

    def __init__(self) -> None:
        self._records: TuningRecords | None = None

    def revision(self) -> object:
        """The tuning records (a new object once tuning stores, clears or reloads them)."""
        from prism_core._tuning.tuning_records import records

        self._records = records()
        return self._records

    def sizes_matter(self, op: str) -> bool:
        """Whether ``op``'s tuned choice differs by size in the records of the last
        ``revision()`` (never loads them: dispatch asks while it holds its locks)."""
        held = self._records
        return held is not None and held.sizes_matter(op)


def tuned_records() -> TuningRecords:
    """This process's tuning records (loaded once; a new object after tuning or a reload)."""
    from prism_core._tuning.tuning_records import records

    return records()


def execution_policy(policy: object) -> ScopeBlock:
    """Choose by ``policy`` (a :class:`prism_core.ExecutionPolicy`) in what follows; ``None``
    goes back to the default (speed).

    Dispatch then ranks the candidates by the policy's priority over their tuned times where
    the tuner measured them, else the performance model's predicted times (cost per run from
    ``cloud_price``, energy from ``tdp_watts``), and a call that no candidate can run within
    the policy's limits raises :class:`prism_core.PolicyError` naming the best one and by how
    much it misses.  ``prefer="reference"`` still puts the reference first.
    """
    from prism_core._tuning.execution_policy import ExecutionPolicy

    if policy is not None and not isinstance(policy, ExecutionPolicy):
        shown = f"{policy!r} ({type(policy).__name__})"
        raise TypeError(
            "execution_policy(): policy must be a prism_core.ExecutionPolicy such as "
            f"ExecutionPolicy(priority='speed', max_latency_ms=500), or None; got {shown}"
        )
    return ScopeBlock({"execution": policy})


def size_text(bucket: int) -> str:
    """The element counts of size bucket ``bucket`` (``tuning.bucket_of``)."""
    return "no elements" if bucket <= 0 else f"{1 << (bucket - 1)} to {(1 << bucket) - 1} elements"


def by_measurement(request: RankRequest) -> tuple[Ranking, Basis]:
    """The candidates of ``request`` in the order measurements give, and what decided it.

    Tuned times apply when the tuner measured this op on this host for the same device set,
    variant set, dtype and size bucket (``prism_core._tuning.tuning_records``), and only when it
    found a significant gap (``decided == "measured"``): otherwise the declared order stands.
    Without tuned times, candidates on different devices are ordered by the performance
    model's predicted times (a GPU pays the transfer of arguments that are not on it).  Under
    an execution policy (``execution_policy()``), the policy ranks tuned or predicted times,
    costs and energies, and a call nothing can run within its limits raises ``PolicyError``.
    A named backend or device still chooses among its own variants this way; ``prefer=
    "reference"`` never reorders.
    """
    scope, ranked, dtypes, name = request.scope, request.ranked, request.dtypes, request.op.name
    policy = scope.execution
    assert policy is None or isinstance(policy, _policy_type())
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
    tuned = tuned_records()
    device_types = {d.device_type for _, d, _ in ranked if d is not None}
    devices = "+".join(sorted(device_types))
    names = tuple(sorted(v.name for v, _, _ in ranked))
    bucket = sum(elements(a) for a in request.arrays).bit_length()
    entry = tuned.lookup(name, devices, dtype, bucket, names)
    where = f"{devices}, {dtype}, {size_text(bucket)}"
    if entry is None and first_use() is None:
        # The nearest tuned size of the same op, devices, dtype and variants stands in (the
        # plan key has no size bucket where the tuned choice is the same at every size).
        same = [
            e
            for e in tuned.for_op(name)
            if e.device == devices and e.dtype == dtype and tuple(e.variants) == names
        ]
        if same:
            entry = min(same, key=lambda e: (abs(e.bucket - bucket), e.bucket))
            where = f"{devices}, {dtype}, {size_text(entry.bucket)} (the nearest tuned size)"
    position = {v.name: i for i, (v, _, _) in enumerate(ranked)}
    if policy is not None:
        return by_policy(request, policy, dtype, entry, where, tuned)
    if entry is None:
        if len(device_types) > 1 and not mixed:
            modelled = by_model(request, dtype, tuned)
            if modelled is not None:
                return modelled
        return ranked, Basis(note=f"{NOT_TUNED} for {where}")
    times = tuple(sorted(entry.times.items(), key=lambda kv: kv[1]))
    if entry.decided != "measured":
        return ranked, Basis(
            "tie",
            f"timed on {where}; no variant significantly faster than the declared first",
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
    """A candidate as an execution policy sees it: a model row, labelled by variant, at the
    price per hour of its device here."""

    __slots__ = ("cost_per_hour", "cost_per_run", "energy_j", "label", "seconds", "throughput")

    def __init__(self, label: str, row: PerformanceRow | _Timed, per_hour: float) -> None:
        self.label = label
        self.seconds = row.seconds
        self.throughput = row.throughput
        self.cost_per_run = per_hour * row.seconds / 3600
        self.cost_per_hour = per_hour
        self.energy_j = row.energy_j


def _price_note(priced: dict[str, tuple[float, str]]) -> str:
    """What the devices of a call cost under a policy, where the rule (not a description)
    gave the price."""
    parts = []
    for device, (per_hour, source) in priced.items():
        if source == "free":
            parts.append(
                f"{device} at $0/hour: a device of this host without a cloud_price is free to "
                "its owner (PRISM_HOST_PRICE sets a price)"
            )
        elif source == "PRISM_HOST_PRICE":
            parts.append(f"{device} at ${per_hour:g}/hour (PRISM_HOST_PRICE)")
    return "; cost on " + "; on ".join(parts) if parts else ""


def model_for(tuned: TuningRecords) -> PerformanceModel:
    """The performance model, calibrated with this host's stored calibration (one per set of
    records: ``prism bench`` stores it)."""
    from prism_core._tuning.model import PerformanceModel

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


_models: dict[int, tuple[TuningRecords, PerformanceModel]] = {}


def predictions(
    request: RankRequest, dtype: str, tuned: TuningRecords
) -> list[PerformanceRow] | str:
    """Each candidate's model row (its arguments on the host when they must move), or why
    the model cannot predict them."""
    from prism_core._tuning.model import ModelError

    model = model_for(tuned)
    shapes = [tuple(int(d) for d in getattr(a, "shape", ())) for a in request.arrays]
    rows = []
    for variant, dev, _backend in request.ranked:
        if dev is None:
            return f"{variant.name} runs on no described device"
        moves = request.moves.get(variant.name)
        there = moves is None or not moves.converters
        try:
            prediction = model.predict(request.op.name, shapes, dtype, dev, on_device=there)
        except (ModelError, ValueError, TypeError) as exc:
            return str(exc)
        rows.append(model.row(prediction, name=variant.name))
    return rows


def by_model(
    request: RankRequest, dtype: str, tuned: TuningRecords
) -> tuple[Ranking, Basis] | None:
    ranked = request.ranked
    rows = predictions(request, dtype, tuned)
    if isinstance(rows, str):
        return None
    order = sorted(range(len(ranked)), key=lambda i: (rows[i].seconds, i))
    times = tuple((ranked[i][0].name, rows[i].seconds) for i in order)
    # Each prediction's bound and the rate it used (a matrix product the matrix units' rate).
    rates = "; ".join(
        f"{ranked[i][0].name} {p.bound}-bound, {p.rate_text}"
        for i in order
        if (p := rows[i].prediction) is not None
    )
    # The figures measured on this host that the predictions used (prism bench --calibrate).
    calibrated = "; ".join(
        text
        for i in order
        if (p := rows[i].prediction) is not None and (text := calibrated_text(p))
    )
    return tuple(ranked[i] for i in order), Basis(
        "modelled",
        "predicted by the performance model (not tuned for this size)"
        + (f": {rates}" if rates else "")
        + (f"; calibrated on this host: {calibrated}" if calibrated else ""),
        times,
    )


def calibrated_text(prediction: Prediction) -> str:
    """The figures of ``prediction`` that were measured on this host, in words:
    ``"nvidia.h100-sxm link 10 GB/s in, 3 GB/s back, launch 8 µs, matmul efficiency 0.2"``;
    ``""`` when it used none (the link only where its transfer counted)."""
    fig = prediction.figures
    if fig is None or not fig.calibrated:
        return ""
    sources = fig.sources
    parts = []
    links = ("host_link_gbps", "host_link_d2h_gbps")
    if prediction.transfer_s > 0 and any(sources.get(k) == "calibrated" for k in links):
        back = fig.host_link_d2h_gbps or fig.host_link_gbps
        parts.append(f"link {fig.host_link_gbps:.3g} GB/s in, {back:.3g} GB/s back")
    if sources.get("launch_s") == "calibrated":
        parts.append(f"launch {seconds_text(fig.launch_s)}")
    op, typed = prediction.op, f"{prediction.op}:{prediction.dtype}"
    key = typed if f"efficiency.{typed}" in sources else op
    if sources.get(f"efficiency.{key}") == "calibrated":
        text = f"{key} efficiency {prediction.efficiency:.3g}"
        if prediction.overhead_s:
            text += f" + {seconds_text(prediction.overhead_s)} a call"
        parts.append(text)
    return f"{fig.device_type} {', '.join(parts)}" if parts else ""


def by_policy(
    request: RankRequest,
    policy: ExecutionPolicy,
    dtype: str,
    entry: TuningEntry | None,
    where: str,
    tuned: TuningRecords,
) -> tuple[Ranking, Basis]:
    """The candidates ranked by an execution policy: those meeting its limits first, each
    group by the policy's priority over tuned times (where measured) or predicted ones."""
    ranked = request.ranked
    predicted = predictions(request, dtype, tuned)
    measured = dict(entry.times) if entry is not None else {}
    if entry is not None and entry.decided != "measured":
        # No significant gap: the times within 5 % of the declared first's count as equal.
        first = measured.get(ranked[0][0].name)
        if first is not None:
            measured = {
                k: (first if abs(v - first) <= 0.05 * first else v) for k, v in measured.items()
            }
    from prism_core._tuning.execution_policy import price_here

    rows: list[_Row] = []
    sources = set()
    # Every candidate runs on a device of this host (a simulated scope is not ranked), which
    # is priced as one's own hardware is: PRISM_HOST_PRICE, else its cloud_price, else free.
    priced: dict[str, tuple[float, str]] = {}
    for i, (variant, dev, _backend) in enumerate(ranked):
        device = dev.device_type if dev is not None else "?"
        label = f"{variant.name} on {device}"
        seconds = measured.get(variant.name)
        if isinstance(predicted, str):
            if seconds is None:
                return ranked, Basis(
                    note=f"policy {policy.describe()}: {variant.name} has no tuned time and the "
                    f"model cannot predict it ({predicted}); the declared order stands"
                )
            model_row: PerformanceRow | _Timed = _Timed(seconds)
            sources.add("measured")
        else:
            model_row = predicted[i]
            if seconds is not None and model_row.prediction is not None:
                model_row = model_for(tuned).row(model_row.prediction, seconds=seconds)
                sources.add("measured")
            else:
                sources.add("modelled")
        priced[device] = price_here(model_row.cost_per_hour)
        rows.append(_Row(label, model_row, priced[device][0]))
    ok = [not policy.misses(r) for r in rows]
    if not any(ok):
        policy.choose(rows)  # raises PolicyError naming the best candidate and its misses
    order = sorted(range(len(rows)), key=lambda i: (not ok[i], policy.key(rows[i])[:-1], i))
    times = tuple((ranked[i][0].name, rows[i].seconds) for i in order)
    decided = "measured" if sources == {"measured"} else "modelled"
    note = f"policy {policy.describe()}" + (f"; timed on {where}" if measured else "")
    limits = (policy.max_cost_per_hour, policy.max_cost_per_run)
    if policy.priority == "cost_efficiency" or limits != (None, None):
        note += _price_note(priced)
    if not isinstance(predicted, str):  # the predictions used: their calibrated figures
        calibrated = "; ".join(
            text
            for i in order
            if ranked[i][0].name not in measured
            and (p := predicted[i].prediction) is not None
            and (text := calibrated_text(p))
        )
        note += f"; calibrated on this host: {calibrated}" if calibrated else ""
    return tuple(ranked[i] for i in order), Basis(decided, note, times)


class _Timed:
    """A measured time alone (no model row): no throughput, price or energy known."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.throughput = 0.0
        self.cost_per_run = None
        self.cost_per_hour = None
        self.energy_j = None


def _policy_type() -> type[ExecutionPolicy]:
    from prism_core._tuning.execution_policy import ExecutionPolicy

    return ExecutionPolicy
