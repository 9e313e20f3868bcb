"""Execution policies: what a choice among devices optimises, and the limits it must respect.

The seed's ``ExecutionPolicy(priority=..., max_latency_ms=..., min_throughput=...,
max_cost_per_hour=...)``.  A policy ranks candidate rows (a device, or ``count`` of them, with
the predicted or measured seconds of a run, its throughput, cost and energy: the performance
model's :class:`~prism_core._tuning.predictions.PerformanceRow`, or anything with the same
attributes) and keeps those that meet its constraints; when none does, :class:`PolicyError` names
the best candidate and by how much it misses each one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, InitVar, dataclass
from typing import Any, Protocol, TypeVar

from prism_core._tuning.predictions import format_seconds
from prism_core.kernel.config import host_price
from prism_core.kernel.errors import PrismError, did_you_mean

__all__ = [
    "PRIORITIES",
    "Candidate",
    "ExecutionPolicy",
    "PolicyError",
    "choose",
    "price_here",
]

#: What a policy can optimise.
PRIORITIES = ("speed", "cost_efficiency", "latency", "throughput", "energy")


class Candidate(Protocol):
    """What a policy reads of a row: the model's ``PerformanceRow`` has all of it."""

    @property
    def label(self) -> str: ...  # "nvidia.l4 x1", for messages
    @property
    def seconds(self) -> float: ...  # per run
    @property
    def throughput(self) -> float: ...  # bytes of data per second
    @property
    def cost_per_run(self) -> float | None: ...  # US dollars; None without a price
    @property
    def cost_per_hour(self) -> float | None: ...  # US dollars
    @property
    def energy_j(self) -> float | None: ...  # joules; None without a TDP


Row = TypeVar("Row", bound=Candidate)


class PolicyError(PrismError, ValueError):
    """No candidate meets the policy's constraints.  ``best`` is the best candidate under the
    priority, ``misses`` says by how much it misses each constraint, ``rows`` are all the
    candidates, ranked."""

    __module__ = "prism_core"

    def __init__(
        self,
        message: str,
        *,
        policy: ExecutionPolicy | None = None,
        best: Any = None,
        misses: Sequence[str] = (),
        rows: Sequence[Any] = (),
    ) -> None:
        super().__init__(message)
        self.policy = policy
        self.best = best
        self.misses = tuple(misses)
        self.rows = tuple(rows)


def _limit(value: Any, name: str, unit: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"ExecutionPolicy(): {name} must be a number ({unit}) or None for no limit; got "
            f"{value!r} ({type(value).__name__})"
        )
    if math.isnan(value) or value <= 0:
        raise ValueError(
            f"ExecutionPolicy(): {name} must be > 0 ({unit}), or None for no limit; got {value!r}"
        )
    return float(value)


def _pct(over: float, limit: float) -> str:
    return f"{over / limit * 100:.0f} %"


@dataclass(frozen=True)
class ExecutionPolicy:
    """How to choose among devices: a ``priority`` and optional constraints.

    :param priority: ``"speed"`` (least time per run, the default), ``"latency"`` (the same
        ranking: time of one run, for use with ``max_latency_ms``), ``"throughput"`` (most data
        per second when runs follow each other, transfers overlapping compute),
        ``"cost_efficiency"`` (least US dollars per run at ``cloud_price``; devices without a
        price rank last) or ``"energy"`` (least joules per run at TDP; devices without
        ``tdp_watts`` rank last).
    :param max_latency_ms: the longest a run may take, in milliseconds.
    :param min_throughput: the least data per second, in bytes per second (the unit of the
        rows' ``throughput``: a table's "GB/s" column times 10^9).
    :param max_cost_per_hour: the most the devices may cost per hour together, in US dollars
        (a device without a price does not meet it: its cost is unknown).  A device of this
        host, which dispatch chooses among, always has a price: :func:`price_here`.
    :param max_cost_per_run: the most one run may cost, in US dollars (same rule).
    :param cost_constraint: the seed's spelling of ``max_cost_per_run`` (``None``: no limit);
        give one of the two.

    Ties are broken by time, then by the row's label.
    """

    priority: str = "speed"
    _: KW_ONLY
    max_latency_ms: float | None = None
    min_throughput: float | None = None
    max_cost_per_hour: float | None = None
    max_cost_per_run: float | None = None
    cost_constraint: InitVar[float | None] = None

    def __post_init__(self, cost_constraint: float | None) -> None:
        if not isinstance(self.priority, str) or self.priority not in PRIORITIES:
            hint = did_you_mean(self.priority, PRIORITIES) if isinstance(self.priority, str) else ""
            raise ValueError(
                f"ExecutionPolicy(): priority must be one of {', '.join(map(repr, PRIORITIES))}; "
                f"got {self.priority!r}{hint}"
            )
        if cost_constraint is not None:
            if self.max_cost_per_run is not None:
                raise TypeError(
                    "ExecutionPolicy(): give max_cost_per_run or cost_constraint (the seed's "
                    "name for it), not both"
                )
            object.__setattr__(self, "max_cost_per_run", cost_constraint)
        for name, unit in (
            ("max_latency_ms", "milliseconds"),
            ("min_throughput", "bytes per second"),
            ("max_cost_per_hour", "US dollars per hour"),
            ("max_cost_per_run", "US dollars per run"),
        ):
            object.__setattr__(self, name, _limit(getattr(self, name), name, unit))

    # -- ranking --------------------------------------------------------------------------------
    def key(self, row: Candidate) -> tuple[Any, ...]:
        """The sort key of ``row`` under the priority (smaller is better)."""
        seconds = row.seconds
        if self.priority == "throughput":
            return (-row.throughput, seconds, row.label)
        if self.priority == "cost_efficiency":
            cost = row.cost_per_run
            return (cost is None, cost or 0.0, seconds, row.label)
        if self.priority == "energy":
            energy = row.energy_j
            return (energy is None, energy or 0.0, seconds, row.label)
        return (seconds, row.label)  # speed, latency

    def misses(self, row: Candidate) -> tuple[str, ...]:
        """How ``row`` misses each constraint, one sentence each (empty: it meets them all)."""
        out: list[str] = []
        if self.max_latency_ms is not None:
            ms = row.seconds * 1e3
            limit = self.max_latency_ms
            if ms > limit:
                out.append(
                    f"{row.label} takes {format_seconds(row.seconds)}, "
                    f"{format_seconds((ms - limit) / 1e3)} ({_pct(ms - limit, limit)}) over "
                    f"max_latency_ms={limit:g}"
                )
        if self.min_throughput is not None:
            have, want = row.throughput, self.min_throughput
            if have < want:
                out.append(
                    f"{row.label} processes {have / 1e9:.3g} GB/s, {(want - have) / 1e9:.3g} GB/s "
                    f"({_pct(want - have, want)}) under min_throughput={want:g} B/s"
                )
        for name, value, what in (
            ("max_cost_per_hour", row.cost_per_hour, "per hour"),
            ("max_cost_per_run", row.cost_per_run, "per run"),
        ):
            limit_value: float | None = getattr(self, name)
            if limit_value is None:
                continue
            if value is None:
                out.append(f"{row.label} has no cloud_price, so {name}={limit_value:g} is unmet")
            elif value > limit_value:
                out.append(
                    f"{row.label} costs ${value:.3g} {what}, ${value - limit_value:.3g} "
                    f"({_pct(value - limit_value, limit_value)}) over {name}={limit_value:g}"
                )
        return tuple(out)

    def choose(self, rows: Iterable[Row]) -> tuple[Row, list[Row]]:
        """(the chosen row, every row ranked): the rows meeting the constraints first, each
        group in the priority's order.  Raises :class:`PolicyError` when none meets them,
        ``ValueError`` when there are no rows."""
        return choose(rows, self)

    def describe(self) -> str:
        """``"speed, max_latency_ms=500"``: the priority and the constraints set."""
        parts = [self.priority]
        for name in ("max_latency_ms", "min_throughput", "max_cost_per_hour", "max_cost_per_run"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={value:g}")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "priority": self.priority,
            "max_latency_ms": self.max_latency_ms,
            "min_throughput": self.min_throughput,
            "max_cost_per_hour": self.max_cost_per_hour,
            "max_cost_per_run": self.max_cost_per_run,
        }


# Set here, not in the class body: dataclasses reads the string annotations KW_ONLY and InitVar
# in the namespace of the class's module, which must be this one while the class is made.
ExecutionPolicy.__module__ = "prism_core"


def price_here(cloud_price: float | None) -> tuple[float, str]:
    """(US dollars per hour, where that comes from) for a device of this host whose description
    gives ``cloud_price`` (``None``: none): ``PRISM_HOST_PRICE`` where set (what this host
    costs its user), else the description's ``cloud_price``, else 0: a device one owns is free
    to use.  ``ValueError`` for a ``PRISM_HOST_PRICE`` that is not a number >= 0."""
    set_here = host_price()
    if set_here is not None:
        return set_here, "PRISM_HOST_PRICE"
    if cloud_price is not None:
        return cloud_price, "cloud_price"
    return 0.0, "free"


def choose(rows: Iterable[Row], policy: ExecutionPolicy | None = None) -> tuple[Row, list[Row]]:
    """(the chosen row, every row ranked) under ``policy`` (default: speed, no constraints).

    The rows that meet every constraint come first, in the priority's order, then the others in
    the same order.  Raises :class:`PolicyError` when no row meets the constraints (naming the
    best row under the priority and how far it misses each), ``ValueError`` for no rows.
    """
    if policy is None:
        policy = ExecutionPolicy()
    elif not isinstance(policy, ExecutionPolicy):
        raise TypeError(
            f"policy must be a prism_core.ExecutionPolicy (or None for speed), got {policy!r}"
        )
    ranked = sorted(rows, key=policy.key)
    if not ranked:
        raise ValueError("choose(): no candidates to choose from")
    meeting = [r for r in ranked if not policy.misses(r)]
    if not meeting:
        best = ranked[0]
        misses = policy.misses(best)
        others = len(ranked) - 1
        tail = (
            f"; none of the other {others} candidate{'s' if others != 1 else ''} meets them either"
            if others
            else ""
        )
        raise PolicyError(
            f"no candidate meets the policy ({policy.describe()}); the best under "
            f"{policy.priority}: " + "; ".join(misses) + tail,
            policy=policy,
            best=best,
            misses=misses,
            rows=ranked,
        )
    rest = [r for r in ranked if policy.misses(r)]
    return meeting[0], meeting + rest
