"""Placements in the order an execution policy gives of their measured times
(``prism_core.tuning``'s execution policies, docs/functions.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prism_core._function.arguments import leaves
from prism_core._function.candidates import PlacementCandidate
from prism_core.kernel.dispatch import movement
from prism_core.kernel.quantities import seconds_text

__all__ = ["by_policy"]


@dataclass(frozen=True)
class _Row:
    """A measured placement as an execution policy reads it (``execution_policy.Candidate``)."""

    label: str
    seconds: float
    throughput: float
    cost_per_run: float | None
    cost_per_hour: float | None
    energy_j: float | None
    candidate: PlacementCandidate


def by_policy(
    policy: Any,
    ok: list[PlacementCandidate],
    times: dict[str, float],
    significant: bool,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    basis: str,
) -> tuple[list[PlacementCandidate], str, str]:
    """The measured placements in the order ``policy`` gives (its priority over their times,
    costs at the host's price and energies at TDP; those meeting its limits first), then the
    unmeasured ones; ``PolicyError`` when no measured placement meets its limits.  Under a
    priority of time (speed, latency) a measurement with no significant gap keeps the declared
    order, as the tuner's tie rule says."""
    from prism_core._tuning.execution_policy import choose, price_here

    data = sum(movement.nbytes(leaf) or 0 for v in (*args, *kwargs.values()) for leaf in leaves(v))
    rows = []
    for c in ok:
        if c.backend not in times:
            continue
        t = times[c.backend]
        price, _ = price_here(
            c.target.data.get("cloud_price", {}).get("usd_per_hour") if c.target else None
        )
        tdp = None if c.target is None else c.target.tdp_watts
        label = c.backend + (f" on {c.device}" if c.device else "")
        rows.append(
            _Row(
                label,
                t,
                data / t if t > 0 else 0.0,
                price * t / 3600,
                price,
                None if tdp is None else tdp * t,
                c,
            )
        )
    if not rows:
        return ok, basis, "declared"
    _, ranked = choose(rows, policy)  # PolicyError: no measured placement meets the limits
    if policy.priority in ("speed", "latency") and not significant:
        # A tie within the noise: the declared order, those that miss a limit last.
        missing = {r.candidate.backend for r in rows if policy.misses(r)}
        order = sorted(ok, key=lambda c: c.backend in missing)
    else:
        order = [r.candidate for r in ranked] + [c for c in ok if c.backend not in times]
    shown = ", ".join(f"{r.label} {seconds_text(r.seconds)}" for r in ranked)
    label = order[0].backend + (f" on {order[0].device}" if order[0].device else "")
    return order, f"execution policy ({policy.describe()}): {label} (measured: {shown})", "policy"
