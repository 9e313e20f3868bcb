"""Plans: the decision cached for one (scope, argument signature), and how one is built from
the op's variants (eligibility, data moves, ranking).  How a plan runs a call is ``calls.py``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prism_core.kernel.contract.variant import VariantImportError
from prism_core.kernel.dispatch import ranking
from prism_core.kernel.dispatch.arguments import ArraySpec, Verdict, array_args, array_dtypes
from prism_core.kernel.dispatch.decision import Basis, Candidate
from prism_core.kernel.dispatch.eligibility import WAY_OUT, home, judge, rank_key, verified
from prism_core.kernel.dispatch.moves import Moves, moves_for
from prism_core.kernel.dispatch.registry import size_keyed

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.contract.variant import Variant
    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.dispatch.eligibility import Ranking, RankKey
    from prism_core.kernel.dispatch.registry import Op
    from prism_core.kernel.dispatch.scope import Scope

__all__ = ["Plan", "build", "executor", "resolved"]


def _unfinished(*args: object, **kwargs: object) -> object:
    raise AssertionError("a plan was used before finish() set how it runs")


@dataclass(slots=True)  # slots: the hot path reads plan.fn on every call
class Plan:
    """The cached decision for one (scope, signature).  Never changed once cached: a failure
    makes a new plan that replaces it (``record_failure``), so that a thread always reads a
    function and the variant it belongs to from one consistent object."""

    ranked: Ranking
    rejected: tuple[Candidate, ...]
    simulated: bool
    reference: Variant | None
    #: Per variant name (and "" for the reference run of a simulation): the arguments to move
    #: to the backend that executes it, and the sentences saying so.
    moves: dict[str, Moves]
    #: The dispatch generation the plan was built at (``registry.store_plan``).
    generation: int
    failed: frozenset[str] = frozenset()
    #: The fast path: ``first``'s function, when it needs nothing per call (no can_run, no
    #: move); or the checked fast path: ``first``'s ``can_run`` (``check``), then its function
    #: (``checked``).  ``backend`` is theirs, for the thread-pool coordinator.
    fn: Callable[..., object] | None = None
    first: Variant | None = None
    checked: Callable[..., object] | None = None
    check: Callable[..., Verdict] | None = None
    backend: str = ""
    #: Everything else: runs the call (per-call checks, moves, fallback), failures included.
    call: Callable[..., object] = field(default=_unfinished)
    #: What ordered the candidates: measured times, predicted times or declared priority.
    basis: Basis = field(default_factory=Basis)
    #: Tuned times could order the candidates, but none were measured for the call.
    untuned: bool = False


def build(
    op: Op, scope: Scope, args: Sequence[object], built_at: int, measured: bool = True
) -> Plan:
    """The decision for ``op(*args)`` in ``scope``: every candidate judged, the eligible ranked
    (by measurements too, when ``measured``), their moves; ``calls.build_plan`` makes it run."""
    from prism_core.kernel.dispatch import movement
    from prism_core.kernel.plugins import plugins

    dtypes = array_dtypes(op, args)
    accepted: list[tuple[RankKey, Variant, DeviceDescription | None, Backend | None]] = []
    rejected: list[Candidate] = []
    arrays = array_args(op, args)
    for i, a in enumerate(arrays):
        if type(a).__name__ == "matrix" and type(a).__module__.startswith("numpy"):
            raise TypeError(
                f"{op.name}: array argument {i} is a numpy.matrix, which Prism does not take "
                "(its operators and reductions are not an array's, and NumPy recommends "
                "against it); pass numpy.asarray(m)"
            )
    # NumPy's masked arrays run on NumPy: another backend would drop the mask, silently.
    masked = any(movement.is_masked(a) for a in arrays)
    for variant in list(op.variants):
        dev, backend, reasons = judge(op, variant, scope, dtypes)
        if masked and not reasons and not variant.reference:
            reasons = [
                "a numpy.ma.MaskedArray runs on NumPy, whose functions know its mask "
                f"({variant.backend} would drop it)"
            ]
        if not reasons and variant.placement is not None:  # where data lives is in the key
            verdict = variant.placement(*args)
            if verdict is not True:
                reasons = [str(verdict or "its placement said no")]
        if reasons:
            rejected.append(Candidate.rejected(variant, reasons))
        else:
            accepted.append((rank_key(scope, variant), variant, dev, backend))
    reference = next((v for v in op.variants if v.reference), None)
    ps = plugins()
    backends = ps.backends
    origin = home(op, args, reference)
    # Where data lives, it stays (docs/backends.md): a variant taking every array as it is ranks
    # first.  Without arrays (`log(0.5)`), automatic mode makes the reference backend's arrays.
    has_arrays = any(isinstance(a, ArraySpec) or ps.owner(a) is not None for a in arrays)
    anywhere = has_arrays or scope.backend is not None or origin is None
    origin_name = None if origin is None else origin.name
    order = []
    for key, variant, dev, backend in accepted:
        own = moves_for(op, backend, dev, args, None)
        stays = not own.converters and (anywhere or variant.backend == origin_name)
        order.append(((key[0], 0 if stays else 1, *key[2:]), variant, dev, backend))
    order.sort(key=lambda item: item[0])
    ranked = tuple((v, d, b) for _, v, d, b in order)
    # A result made away from the arguments' backend goes back to it, unless the caller named a
    # backend or a device, or the op is the way out to NumPy (``to_numpy``).
    named = scope.backend is not None or scope.device is not None
    back = None if named or op.name == WAY_OUT else origin
    moves: dict[str, Moves] = {}
    for variant, dev, _backend in ranked:
        runner = reference if (scope.simulated and reference is not None) else variant
        moves[variant.name] = moves_for(
            op, backends.get(runner.backend), dev, args, back, bring_back=not has_arrays
        )
    if scope.simulated and reference is not None:
        # A simulation runs the reference even where no candidate can run or every one declines.
        moves[""] = moves_for(
            op, backends.get(reference.backend), None, args, back, bring_back=not has_arrays
        )
    plan = Plan(ranked, tuple(rejected), scope.simulated, reference, moves, built_at)
    if measured:
        outcome = ranking.rank(ranking.RankRequest(op, scope, ranked, args, dtypes, moves))
        plan.ranked, plan.basis, plan.untuned = outcome.order, outcome.basis, outcome.untuned
        if outcome.by_size:  # this op's plans are keyed by size bucket from now on
            size_keyed(op)
    if not scope.simulated:
        plan.ranked, more = verified(plan.ranked)
        plan.rejected = plan.rejected + more
    # Unless something imported logging, no handler is configured: the call does not import it.
    logging = sys.modules.get("logging")
    if logging is not None and logging.getLogger("prism_core").isEnabledFor(logging.DEBUG):
        logging.getLogger("prism_core").debug(
            "dispatch %s in %r: %s (rejected: %s)",
            op.name,
            scope,
            ranked[0][0].name if ranked else "nothing eligible",
            "; ".join(f"{c.variant}: {', '.join(c.reasons)}" for c in rejected) or "none",
        )
    return plan


def executor(plan: Plan, variant: Variant) -> Variant:
    """The variant that runs for a chosen one: itself, or the reference when simulating."""
    return plan.reference if (plan.simulated and plan.reference is not None) else variant


def resolved(variant: Variant) -> Callable[..., object] | None:
    """The variant's function if it can be had now, else ``None`` (the call then goes the
    checked way, where an import failure is that variant's failure)."""
    try:
        return variant.resolve()
    except VariantImportError:
        return None
