"""Running a call: the slow side of an op's function (``ops.py`` holds the fast side).  A
plan is built and cached on a miss, made runnable (``finish``: the fast path, the checked fast
path or the general way), and on a backend failure in automatic mode the variant that raised
is blamed, recorded and replaced by the op's reference, then the next candidates (``derive``)::

    key = (scope, type and dtype of each array argument)
    plan = op._plans.get(key)                       # the hot path ends here:
        plan.fn(*args)                              #   nothing per call, or
        plan.check(*args) and plan.checked(*args)   #   a can_run, nothing else, or
        plan.call(*args)                            #   moves / fallback in progress
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from prism_core.kernel.contract.variant import VariantImportError
from prism_core.kernel.dispatch.arguments import Verdict, plan_key
from prism_core.kernel.dispatch.eligibility import unavailable
from prism_core.kernel.dispatch.fallback import (
    CALLER_ERRORS,
    BackendError,
    DispatchError,
    note_plugin_problem,
    record,
)
from prism_core.kernel.dispatch.interception import LENIENT, PLANNING
from prism_core.kernel.dispatch.location import Router, is_located, located_key, locator
from prism_core.kernel.dispatch.moves import NO_MOVES, convert
from prism_core.kernel.dispatch.plans import Plan, build, executor, resolved
from prism_core.kernel.dispatch.ranking import ensure_current, first_use
from prism_core.kernel.dispatch.registry import ensure_ready, generation, store_plan, swap_plan
from prism_core.kernel.dispatch.scope import SCOPE, current_scope
from prism_core.kernel.errors import describe_exception
from prism_core.kernel.threads import POOLS, entering

if TYPE_CHECKING:
    from prism_core.kernel.contract.variant import Variant
    from prism_core.kernel.dispatch.registry import Op, PlanKey
    from prism_core.kernel.dispatch.scope import Scope

__all__ = ["build_plan", "call_slow", "declined", "failed", "plan_for", "run_checked"]


def finish(op: Op, key: PlanKey | None, plan: Plan) -> None:
    """The ways this plan runs a call: the fast path (``fn``: the first live candidate's
    function, when it needs nothing per call), the checked fast path (``check``, the first
    candidate's ``can_run``, then ``checked``, its function), or the general checked way
    (``call``)."""
    live = [v for v, _, _ in plan.ranked if v.name not in plan.failed]
    plan.fn = plan.first = plan.checked = plan.check = None
    plan.backend = ""
    for _v, _d, backend in plan.ranked:  # each backend's thread modules, once per plan
        if backend is not None and backend.thread_modules:
            POOLS.adopt(backend.name, backend.thread_modules)

    def run(*args: Any, **kwargs: Any) -> Any:
        return run_checked(op, key, plan, args, kwargs)

    plan.call = run
    if live:
        first = live[0]
        if plan.moves[first.name].converters:
            return
        fn = resolved(executor(plan, first))
        if fn is None:
            return
        if first.can_run is None:
            plan.fn, plan.first = fn, first
        elif not plan.simulated:
            plan.checked, plan.check, plan.first = fn, first.can_run, first
        plan.backend = executor(plan, first).backend
    elif plan.simulated and plan.reference is not None and not plan.moves[""].converters:
        fn = resolved(plan.reference)
        if fn is not None:
            plan.fn, plan.first = fn, plan.reference
            plan.backend = plan.reference.backend


def build_plan(
    op: Op,
    key: PlanKey | None,
    scope: Scope,
    args: Sequence[Any],
    built_at: int,
    measured: bool = True,
) -> Plan:
    """A plan built (``plans.build``) and made runnable (``finish``)."""
    plan = build(op, scope, args, built_at, measured)
    finish(op, key, plan)
    if scope.split is not None:
        # The scope splits this op (``prism_core._pipeline.split`` gives it a ``Split``): every
        # call runs the split, whose parts run in scopes without it.  The decision stays what
        # explain shows; plans of scopes without a split are as they were (the scope is in the
        # plan key).
        runner = scope.split.runner_for(op)
        if runner is not None:
            plan.fn = plan.first = plan.checked = plan.check = None
            plan.call = runner
            plan.untuned = False
    return plan


def derive(op: Op, key: PlanKey | None, plan: Plan, failed: frozenset[str]) -> Plan:
    """The plan with the ``failed`` variants left out and its reference moved up to where the
    first of them ranked: the reference's semantics define the op, so a failure never hands
    the call to whichever backend ranks next (a torch failure would land on jax by name).
    Candidates ranked above the failure keep their places (one that declined this call still
    runs the calls it accepts); the rest follow the reference in ranked order
    (docs/dispatch.md, "Fallback")."""
    ranked = plan.ranked
    reference = plan.reference
    if reference is not None and reference.name not in failed:
        names = [v.name for v, _, _ in ranked]
        first = next((i for i, n in enumerate(names) if n in failed), len(names))
        at = names.index(reference.name) if reference.name in names else -1
        if at > first:
            ranked = (*ranked[:first], ranked[at], *ranked[first:at], *ranked[at + 1 :])
    new = Plan(ranked, plan.rejected, plan.simulated, plan.reference, plan.moves, plan.generation)
    new.failed = failed
    new.basis = plan.basis
    new.untuned = plan.untuned
    finish(op, key, new)
    return new


def plan_for(op: Op, key: PlanKey, args: Sequence[Any]) -> tuple[PlanKey, Plan]:
    """The key of the call and its cached plan, or a new one (stored only if nothing it was
    built from changed meanwhile).

    The key is made again when the op's keying changed meanwhile (tuning records loaded for
    the first time may add the size bucket to it).  Where the call's arrays may live in
    several places (``location.py``), the key returned is the located plan's: the type key
    holds a :class:`~prism_core.kernel.dispatch.location.Router` to it.
    """
    plan: Any = op._plans.get(key)
    if isinstance(plan, Router):
        key = located_key(plan, plan.locate(tuple(args)))
        plan = op._plans.get(key)
    if plan is None:
        keying = op._keying[0]
        ensure_ready()  # plugins' variants join their ops (may bump)
        ensure_current(op, current_scope())  # the ranker's revision (may bump)
        if op._keying[0] != keying:
            return plan_for(op, plan_key(op, SCOPE.get(), args), args)
        built_at = generation()  # read before anything the plan is built from
        if not is_located(key):
            locate = locator(op, args)
            if locate is not None:
                router = Router(key, locate, built_at)
                router.call = route(op, router)
                store_plan(op, key, router, built_at)
                key = located_key(router, locate(tuple(args)))
        plan = build_plan(op, key, current_scope(), args, built_at)
        store_plan(op, key, plan, built_at)
    return key, plan


def route(op: Op, router: Router) -> Callable[..., Any]:
    """A :class:`Router`'s call: the plan of the places this call's arrays live in, run (its
    fast path written out, as the op's function writes it: this is the hot path of data on a
    device)."""
    get = op._plans.get
    locate = router.locate
    pools = POOLS

    def call(*args: Any, **kwargs: Any) -> Any:
        at = (router, locate(args))
        plan = get(at)
        if plan is None:
            return call_slow(op, at, args, kwargs)
        fn = plan.fn
        if fn is not None:
            if plan.backend != pools.last:
                pools.switch(plan.backend)
            try:
                return fn(*args, **kwargs)
            except CALLER_ERRORS:
                raise
            except Exception as exc:
                return failed(op, at, plan, exc, args, kwargs)
        return _unfast(op, at, plan, args, kwargs)

    return call


def _unfast(
    op: Op, key: PlanKey, plan: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """The call of a cached plan without a fast path (``plan.fn`` is ``None``): the checked
    fast path, or the general way, as the op's function runs them (``ops._make_function``)."""
    fn = plan.checked
    if fn is not None:  # the first candidate has a can_run: check, then call
        if plan.backend != POOLS.last:
            POOLS.switch(plan.backend)
        assert plan.check is not None  # set together with checked
        verdict = plan.check(*args, **kwargs)
        if verdict is True:
            try:
                return fn(*args, **kwargs)
            except CALLER_ERRORS:
                raise
            except Exception as exc:
                return failed(op, key, plan, exc, args, kwargs)
        return declined(op, key, plan, verdict, args, kwargs)
    return plan.call(*args, **kwargs)


def call_slow(op: Op, key: PlanKey, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A call without a cached plan: build one, then run it (tuning it first when tuning on
    first use is on and nothing was measured for it).  While a pipeline is planned, the
    planner answers instead (``PLANNING``)."""
    planning = PLANNING.get()
    if planning is not None:
        return planning(op, args, kwargs)
    key, plan = plan_for(op, key, args)
    hook = first_use()
    if hook is not None and plan.untuned and hook(op, key, args, kwargs):
        key, plan = plan_for(op, plan_key(op, SCOPE.get(), args), args)
    fn = plan.fn
    if fn is not None:
        entering(plan.backend)
        try:
            return fn(*args, **kwargs)
        except CALLER_ERRORS:
            raise
        except Exception as exc:
            return failed(op, key, plan, exc, args, kwargs)
    return plan.call(*args, **kwargs)


def declined(
    op: Op,
    key: PlanKey,
    plan: Plan,
    verdict: Verdict,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """The checked fast path's ``can_run`` declined this call: the next candidates decide."""
    variant = plan.first
    assert variant is not None  # set together with checked
    why = f"{variant.name}: {verdict or 'can_run said no'}"
    return run_checked(op, key, plan, args, kwargs, (variant.name,), [why])


def failed(
    op: Op, key: PlanKey, plan: Plan, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """A fast path's function (``plan.fn`` or ``plan.checked``, both ``plan.first``'s) raised:
    record it, then go on with the next candidate (automatic mode) or raise."""
    variant = plan.first
    assert variant is not None  # fn is set together with first
    try:
        current = record_failure(op, key, plan, variant, exc)
    except BackendError as error:
        lenient = LENIENT.get()
        if lenient is None:
            raise
        return lenient(op, args, kwargs, error)
    return run_checked(op, key, current, args, kwargs, (variant.name,), [], exc)


def run_checked(
    op: Op,
    key: PlanKey | None,
    plan: Plan,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    tried: Sequence[str] = (),
    reasons: list[str] | None = None,
    error: Exception | None = None,
) -> Any:
    """Run the call on the best candidate that accepts it: per-call checks, moves, fallback.

    Each variant runs at most once per call (``tried``); a failure is blamed on the variant
    that raised and on no other.  Where the scope cannot run the call
    and a lenient stage is in force (``LENIENT``), the stage decides what runs it.
    """
    try:
        return _run_checked(op, key, plan, args, kwargs, tried, reasons, error)
    except (BackendError, DispatchError) as exc:
        lenient = LENIENT.get()
        if lenient is None:
            raise
        return lenient(op, args, kwargs, exc)


def _run_checked(
    op: Op,
    key: PlanKey | None,
    plan: Plan,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    tried: Sequence[str],
    reasons: list[str] | None,
    error: Exception | None,
) -> Any:
    done = set(tried)
    declined = list(reasons or ())
    while True:
        for variant, _dev, _backend in plan.ranked:
            name = variant.name
            if name in done or name in plan.failed:
                continue
            done.add(name)
            # A candidate after the first that can run was not asked whether its backend is
            # available (``verified``): ask now, before falling back to it.
            why_not = None if plan.simulated else unavailable(_backend)
            if why_not is not None:
                declined.append(f"{name}: {why_not}")
                continue
            if variant.can_run is not None:
                verdict = variant.can_run(*args, **kwargs)
                if verdict is not True:
                    declined.append(f"{name}: {verdict or 'can_run said no'}")
                    continue
            try:
                runner = executor(plan, variant)
                fn = runner.resolve()
                entering(runner.backend)
                moves = plan.moves.get(name, NO_MOVES)
                if not moves.converters:
                    return fn(*args, **kwargs)
                out = fn(*convert(args, moves.converters), **kwargs)
                return out if moves.result is None else moves.result(out)
            except CALLER_ERRORS:
                raise
            except Exception as exc:
                plan = record_failure(op, key, plan, variant, exc)
                error = exc
                break
        else:
            break
    if error is not None:
        raise DispatchError(
            f"{op.name}: every eligible variant failed; the last: {type(error).__name__}: "
            f"{error}" + "".join(f"\n  {r}" for r in declined)
        ) from error
    if plan.simulated and plan.reference is not None:
        moves = plan.moves.get("", NO_MOVES)
        entering(plan.reference.backend)
        if not moves.converters:
            return plan.reference.resolve()(*args, **kwargs)
        out = plan.reference.resolve()(*convert(args, moves.converters), **kwargs)
        return out if moves.result is None else moves.result(out)
    raise nothing_eligible(op, plan, declined)


def record_failure(
    op: Op, key: PlanKey | None, plan: Plan, variant: Variant, exc: Exception
) -> Plan:
    """``variant`` raised a backend error: raise (a device or backend was named, strict mode,
    or a simulation, which runs the reference and has nothing to fall back to); else record it
    once with its count, warn once at the caller's line, and return the plan without it."""
    name = variant.name
    scope = current_scope()
    what = (
        str(exc)
        if isinstance(exc, VariantImportError)
        else f"variant {name} failed: {describe_exception(exc)}"
    )
    if isinstance(exc, VariantImportError):
        note_plugin_problem(variant, str(exc))
    if not scope.automatic or plan.simulated:
        why = (
            "strict mode is on"
            if scope.strict
            else f"the backend {scope.backend!r} was named"
            if scope.backend
            else f"the device {scope.device.device_type!r} was named"
            if scope.device and not scope.simulated
            else "a simulated call runs the reference, and nothing else can stand in for it"
            if plan.simulated
            else "fallback is off"
        )
        raise BackendError(f"{op.name}: {what}; not falling back because {why}") from exc
    new = without(op, key, plan, name)
    nxt = next((v.name for v, _, _ in new.ranked if v.name not in new.failed), None)
    record(op.name, name, exc, nxt)
    return new


def without(op: Op, key: PlanKey | None, plan: Plan, name: str) -> Plan:
    """The plan in force for ``key`` with ``name`` failed, installed in the cache.

    Threads that see the same failure at once agree on one plan: each derives from what the
    cache holds and swaps only if nobody changed it meanwhile (the derivation may import a
    variant's module, so it is not done under the lock).
    """
    while True:
        current = op._plans.get(key)
        base = current if current is not None and current.generation == plan.generation else plan
        if name in base.failed:
            return base
        new = derive(op, key, base, base.failed | {name})
        if swap_plan(op, key, current, new):
            return new


def nothing_eligible(op: Op, plan: Plan, per_call: list[str]) -> DispatchError:
    lines = [f"no variant of {op.name} can run in {current_scope()!r}:"]
    lines.extend(f"  {c.variant}: {'; '.join(c.reasons)}" for c in plan.rejected)
    lines.extend(f"  {r}" for r in per_call)
    lines.extend(f"  {v} failed earlier" for v in sorted(plan.failed))
    return DispatchError("\n".join(lines))
