"""Running a call: the fast path, written once (:func:`fast_path`, which ``ops._make_function``
makes the op's function from), and the slow side.  A plan is built and cached on a miss, made
runnable (``finish``), and on a backend failure in automatic mode the variant that raised is
blamed, recorded and replaced by the op's reference, then the next candidates (``derive``)::

    key = (scope, type and dtype of each array argument)
    plan = op._plans.get(key)                       # the hot path ends here:
        plan.fn(*args)                              #   nothing per call, or
        plan.check(*args) and plan.checked(*args)   #   a can_run, nothing else, or
        plan.call(*args)                            #   moves / fallback in progress
"""

from __future__ import annotations

import dataclasses
import itertools
import linecache
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from prism_core.kernel.contract.variant import VariantImportError
from prism_core.kernel.dispatch import fallback
from prism_core.kernel.dispatch.arguments import Args, Kwargs, Verdict, plan_key
from prism_core.kernel.dispatch.eligibility import unavailable
from prism_core.kernel.dispatch.fallback import CALLER_ERRORS, BackendError, DispatchError
from prism_core.kernel.dispatch.interception import LENIENT, PLANNING
from prism_core.kernel.dispatch.location import Locate, Router, is_located, locator
from prism_core.kernel.dispatch.moves import NO_MOVES
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

__all__ = [
    "build_plan",
    "cached",
    "call_slow",
    "declined",
    "failed",
    "fast_path",
    "plan_for",
    "run_checked",
]


def finish(op: Op, key: PlanKey | None, plan: Plan) -> None:
    """The ways this plan runs a call: ``fn`` (the first live candidate's function, if it needs
    nothing per call), ``check`` then ``checked`` (its ``can_run``, then its function), or
    ``call`` (the general checked way)."""
    first = next((v for v, _, _ in plan.ranked if v.name not in plan.failed), None)
    plan.fn = plan.first = plan.checked = plan.check = None
    plan.backend = ""
    for _v, _d, backend in plan.ranked:  # each backend's thread modules, once per plan
        if backend is not None and backend.thread_modules:
            POOLS.adopt(backend.name, backend.thread_modules)

    def run(*args: object, **kwargs: object) -> object:
        return run_checked(op, key, plan, args, kwargs)

    plan.call = run
    if first is not None:
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
    args: Sequence[object],
    built_at: int,
    measured: bool = True,
) -> Plan:
    """A plan built (``plans.build``) and made runnable (``finish``)."""
    plan = build(op, scope, args, built_at, measured)
    finish(op, key, plan)
    if scope.split is not None:
        # Every call runs the split (``prism_core._pipeline.split``), whose parts run in scopes
        # without it; the decision stays what explain shows (the scope is in the plan key).
        runner = scope.split.runner_for(op)
        if runner is not None:
            plan.fn = plan.first = plan.checked = plan.check = None
            plan.call = runner
            plan.untuned = False
    return plan


def derive(op: Op, key: PlanKey | None, plan: Plan, failed: frozenset[str]) -> Plan:
    """The plan with the ``failed`` variants left out and its reference moved up to where the
    first of them ranked: the reference's semantics define the op, so a failure never hands
    the call to whichever backend ranks next.  Candidates ranked above the failure keep their
    places; the rest follow the reference in ranked order (docs/dispatch.md, "Fallback")."""
    ranked = plan.ranked
    reference = plan.reference
    if reference is not None and reference.name not in failed:
        names = [v.name for v, _, _ in ranked]
        first = next((i for i, n in enumerate(names) if n in failed), len(names))
        at = names.index(reference.name) if reference.name in names else -1
        if at > first:
            ranked = (*ranked[:first], ranked[at], *ranked[first:at], *ranked[at + 1 :])
    new = dataclasses.replace(plan, ranked=ranked, failed=failed)
    finish(op, key, new)  # the ways it runs are made again
    return new


def cached(op: Op, key: PlanKey, args: Sequence[object]) -> tuple[PlanKey, Plan | None]:
    """The key of the call and its cached plan, if any (a router's: the located plan's)."""
    plan = op._plans.get(key)
    if isinstance(plan, Router):
        key = plan.located_key(args)
        plan = op._plans.get(key)
    return key, plan


def plan_for(op: Op, key: PlanKey, args: Sequence[object]) -> tuple[PlanKey, Plan]:
    """The key of the call and its cached plan, or a new one (stored only if nothing it was
    built from changed meanwhile; the key is made again if the op's keying changed).  Where
    the call's arrays may live in several places, the key is the located plan's: the type key
    holds a :class:`~prism_core.kernel.dispatch.location.Router` to it."""
    key, plan = cached(op, key, args)
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
                router = Router(key, locate)  # its call: the located plan's fast path
                router.call = fast_path(op, "key = (router, locate(args))", router, locate)
                store_plan(op, key, router, built_at)
                key = router.located_key(args)
        plan = build_plan(op, key, current_scope(), args, built_at)
        store_plan(op, key, plan, built_at)
    return key, plan


#: The fast path, written once: the op's function and a router's call are made from it, each
#: with its own lines making the call's ``key``.  A cached call runs in this one frame; every
#: other call leaves it for a function of this module (``plan.call`` among them).
_FAST_PATH = """\
def make(op, router, locate, on_device, here):
    get = op._plans.get  # the dict is only ever cleared, never replaced
    token = SCOPE.get
    pools = POOLS  # the thread-pool coordinator: one comparison while the backend is the same
    caller_errors = CALLER_ERRORS

    def call(*args, **kwargs):
{key}
        plan = get(key)
        if plan is None:
            return call_slow(op, key, args, kwargs)
        fn = plan.fn
        if fn is None:
            fn = plan.checked
            if fn is None:  # moves, a split, a router: the general way
                return plan.call(*args, **kwargs)
            if plan.backend != pools.last:
                pools.switch(plan.backend)
            verdict = plan.check(*args, **kwargs) if kwargs else plan.check(*args)
            if verdict is not True:
                return declined(op, key, plan, verdict, args, kwargs)
        elif plan.backend != pools.last:
            pools.switch(plan.backend)
        try:
            if kwargs:
                return fn(*args, **kwargs)
            return fn(*args)
        except caller_errors:
            raise
        except Exception as exc:
            return failed(op, key, plan, exc, args, kwargs)

    return call
"""

#: The fast paths compiled so far, by the lines making their key; the numbers of their sources.
_made: dict[str, Callable[..., Callable[..., object]]] = {}
_sources = itertools.count(1)


def fast_path(
    op: Op,
    key: str,
    router: Router | None = None,
    locate: Locate | None = None,
    *,
    on_device: Callable[..., object] | None = None,
    here: object = None,
) -> Callable[..., object]:
    """A call of ``op`` running the fast path, whose ``key`` lines (Python source, indented
    as the body of a function) make the call's key from ``args`` and ``kwargs``; they may use
    ``op``, ``token`` (the scope's), ``plan_key``, and the ``router``, ``locate``,
    ``on_device`` and ``here`` given.  Compiled once per ``key``; tracebacks show the source."""
    make = _made.get(key)
    if make is None:
        source = _FAST_PATH.format(key=textwrap.indent(key, " " * 8))
        filename = f"<prism_core fast path {next(_sources)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        made: dict[str, Callable[..., Callable[..., object]]] = {}
        exec(compile(source, filename, "exec"), globals(), made)  # the template above
        make = _made[key] = made["make"]
    return make(op, router, locate, on_device, here)


def call_slow(op: Op, key: PlanKey, args: Args, kwargs: Kwargs) -> object:
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
    op: Op, key: PlanKey, plan: Plan, verdict: Verdict, args: Args, kwargs: Kwargs
) -> object:
    """The checked fast path's ``can_run`` declined this call: the next candidates decide."""
    variant = plan.first
    assert variant is not None  # set together with checked
    why = f"{variant.name}: {verdict or 'can_run said no'}"
    return run_checked(op, key, plan, args, kwargs, (variant.name,), [why])


def failed(op: Op, key: PlanKey, plan: Plan, exc: Exception, args: Args, kwargs: Kwargs) -> object:
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
    args: Args,
    kwargs: Kwargs,
    tried: Sequence[str] = (),
    reasons: list[str] | None = None,
    error: Exception | None = None,
) -> object:
    """Run the call on the best candidate that accepts it: per-call checks, moves, fallback.
    Each variant runs at most once per call (``tried``); a failure is blamed on the variant
    that raised and on no other.  Where the scope cannot run the call and a lenient stage is
    in force (``LENIENT``), the stage decides what runs it."""
    try:
        done = set(tried)
        declined = list(reasons or ())
        while True:
            for variant, _dev, _backend in plan.ranked:
                name = variant.name
                if name in done or name in plan.failed:
                    continue
                done.add(name)
                # ``verified`` asked only up to the first that could run: ask the others now.
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
                    return plan.moves.get(name, NO_MOVES).run(fn, args, kwargs)
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
            entering(plan.reference.backend)
            return plan.moves.get("", NO_MOVES).run(plan.reference.resolve(), args, kwargs)
        raise nothing_eligible(op, plan, declined)
    except (BackendError, DispatchError) as exc:
        lenient = LENIENT.get()
        if lenient is None:
            raise
        return lenient(op, args, kwargs, exc)


def record_failure(
    op: Op, key: PlanKey | None, plan: Plan, variant: Variant, exc: Exception
) -> Plan:
    """``variant`` raised a backend error: raise (a device or backend was named, strict mode,
    or a simulation, which runs the reference and has nothing to fall back to); else record it
    once with its count, warn once at the caller's line, and return the plan without it."""
    name = variant.name
    scope = current_scope()
    imported = isinstance(exc, VariantImportError)
    what = str(exc) if imported else f"variant {name} failed: {describe_exception(exc)}"
    if imported:
        fallback.note_plugin_problem(variant, what)
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
    fallback.record(op.name, name, exc, nxt)
    return new


def without(op: Op, key: PlanKey | None, plan: Plan, name: str) -> Plan:
    """The plan in force for ``key`` with ``name`` failed, installed in the cache.  Threads
    that see the same failure at once agree on one plan: each derives from what the cache
    holds and swaps only if nobody changed it meanwhile (not under the lock: deriving may
    import a variant's module)."""
    while True:
        current = op._plans.get(key)
        base = current if current is not None and current.generation == plan.generation else plan
        if name in base.failed:
            return base
        new = derive(op, key, base, base.failed | {name})
        if swap_plan(op, key, current, new, new.generation):
            return new


def nothing_eligible(op: Op, plan: Plan, per_call: list[str]) -> DispatchError:
    lines = [f"no variant of {op.name} can run in {current_scope()!r}:"]
    lines.extend(f"  {c.variant}: {'; '.join(c.reasons)}" for c in plan.rejected)
    lines.extend(f"  {r}" for r in per_call)
    lines.extend(f"  {v} failed earlier" for v in sorted(plan.failed))
    return DispatchError("\n".join(lines))
