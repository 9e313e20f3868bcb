"""``explain``: the decision a call gets in the scope in force, without running it (every
candidate with its verdict and reasons, the data moves, what ordered them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

from prism_core.kernel.dispatch.arguments import plan_key, signature_text
from prism_core.kernel.dispatch.calls import cached, plan_for
from prism_core.kernel.dispatch.decision import Candidate, Decision
from prism_core.kernel.dispatch.eligibility import available, missing, rank_key, unavailable
from prism_core.kernel.dispatch.moves import NO_MOVES, moves_for
from prism_core.kernel.dispatch.registry import as_op
from prism_core.kernel.dispatch.scope import SCOPE, current_scope

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.eligibility import Eligible
    from prism_core.kernel.dispatch.registry import Op, OpFunction

__all__ = ["array_parameters", "arrays_taken", "explain", "positional_parameters"]


def positional_parameters(op: Op) -> tuple[tuple[str, bool], ...] | None:
    """``op``'s positional parameters as ``(name, required)``: from the signature its
    documentation opens with (the catalogue's ``clip(x, /, min=None, max=None): ...``), else
    from its reference function (an op declared with ``@operation``); ``None`` if neither says."""
    import inspect
    import re

    from prism_core.kernel.dispatch.catalogue import parse_signature

    doc = op.__doc__ or ""
    opening = re.match(rf"(?:[\w.]+\.)?{re.escape(op.__name__)}\(", doc)
    end = doc.find(")") if opening else -1
    signature = None
    while opening and end >= 0 and signature is None:  # the first ")" closing a valid list
        try:
            signature = parse_signature(doc[opening.end() - 1 : end + 1])
        except SyntaxError:
            end = doc.find(")", end + 1)
    if signature is None:
        reference = next((v.fn for v in op.variants if v.reference and callable(v.fn)), None)
        if reference is None:
            return None
        try:
            signature = inspect.signature(reference)
        except (TypeError, ValueError):  # a function without a signature (a NumPy ufunc)
            return None
    return tuple(
        (p.name, p.default is p.empty)
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )


def array_parameters(op: Op) -> tuple[tuple[str, bool], ...] | None:
    """``op``'s array parameters (its ``array_args``) as ``(name, required)``: ``clip``'s are
    ``x`` (required), ``min`` and ``max`` (optional).  ``None`` when the op does not list its
    arrays (``einsum``), takes none (``zeros``), or has no signature to read them in."""
    parameters = positional_parameters(op)
    if not op.array_args or parameters is None or max(op.array_args) >= len(parameters):
        return None
    return tuple(parameters[i] for i in op.array_args)


def arrays_taken(op: Op, parameters: Sequence[tuple[str, bool]]) -> str:
    """How many arrays ``op`` takes, in words: ``"2 arrays (x1, x2)"``, ``"1 to 3 arrays (x;
    min, max optional)"``."""
    required = [n for n, r in parameters if r]
    optional = [n for n, r in parameters if not r]
    count = f"{len(required)} to {len(parameters)}" if optional else f"{len(required)}"
    names = ", ".join(required) + (f"; {', '.join(optional)} optional" if optional else "")
    return f"{op.name} takes {count} array{'s' if len(parameters) != 1 else ''} ({names})"


_Plan = TypeVar("_Plan", covariant=True)


class _PlansItself(Protocol[_Plan]):
    """What plans itself when explained: a ``@prism_core.pipeline`` function, a
    ``@prism_core.function`` (the hook lets features above dispatch explain themselves)."""

    def __prism_explain__(self, *args: object, **kwargs: object) -> _Plan: ...


@overload
def explain(op: _PlansItself[_Plan], *args: object, **kwargs: object) -> _Plan: ...
@overload
def explain(op: Op | OpFunction | str, *args: object, **kwargs: object) -> Decision: ...
def explain(op: object, *args: object, **kwargs: object) -> object:
    """The decision ``op(*args, **kwargs)`` gets in the scope in force, without running it;
    arguments may be arrays or :class:`ArraySpec` (shape and dtype only).  An object that plans
    itself (``__prism_explain__``: a ``@prism_core.pipeline`` function, a
    ``@prism_core.function``) gives its own plan."""
    planner = getattr(op, "__prism_explain__", None)
    if planner is not None:
        return planner(*args, **kwargs)
    the_op = as_op(op)
    arrays = array_parameters(the_op)
    if arrays is not None:
        # Refuse a call the op cannot take: its candidates would be judged on absent arguments.
        at = the_op.array_args or ()
        given = [i < len(args) or n in kwargs for i, (n, _) in zip(at, arrays, strict=True)]
        absent = [n for (n, needed), ok in zip(arrays, given, strict=True) if needed and not ok]
        if absent:
            raise TypeError(
                f"{arrays_taken(the_op, arrays)}; {sum(given)} given, {', '.join(absent)} "
                "missing: explain a call the op can take (an ArraySpec stands for an array)"
            )
    if not current_scope().simulated:
        # Every backend's availability, so that a rejection says "not available" and why, first.
        from prism_core.kernel.plugins import plugins

        for backend in list(plugins().backends.values()):
            available(backend)
    key = plan_key(the_op, SCOPE.get(), args)
    from_cache = cached(the_op, key, args)[1] is not None
    key, plan = plan_for(the_op, key, args)
    scope = current_scope()
    candidates: list[Candidate] = []
    chosen: Eligible | None = None
    for variant, dev, _backend in plan.ranked:
        why_not = None if plan.simulated else unavailable(_backend)
        problem = variant.import_problem() or (
            None if plan.simulated or why_not else missing(variant)
        )
        reason = None
        if variant.name in plan.failed:
            reason = "failed earlier in this process (see prism_core.fallbacks())"
        elif why_not:
            reason = why_not
        elif problem:
            reason = f"{variant.origin}: {problem}"
        elif variant.can_run is not None:
            verdict = variant.can_run(*args, **kwargs)
            reason = None if verdict is True else f"can_run: {verdict or 'no'}"
        ok = reason is None
        if ok and chosen is None:
            chosen = (variant, dev, _backend)
        where = dev.device_type if dev else None
        reasons = () if reason is None else (reason,)
        rank = rank_key(
            scope, variant, 1 if plan.moves.get(variant.name, NO_MOVES).converters else 0
        )
        candidates.append(
            Candidate(variant.name, variant.backend, ok, where, reasons, rank, variant.priority)
        )
    candidates.extend(plan.rejected)
    movement: tuple[str, ...] = ()
    if chosen is not None:
        # What these arguments cost (the plan's sentences are those of the call that built it);
        # simulated, what the chosen variant would move, not the reference standing in for it.
        movement = moves_for(the_op, chosen[2], chosen[1], args, None).sentences
        if not plan.simulated:  # and how the result goes back
            built = plan.moves.get(chosen[0].name, NO_MOVES).sentences
            movement += tuple(line for line in built if line.startswith("result: "))
    elif plan.simulated:
        movement = plan.moves.get("", NO_MOVES).sentences
    executed = chosen[0].name if chosen is not None else None
    if plan.simulated and plan.reference is not None:
        executed = plan.reference.name
    return Decision(
        op=the_op.name,
        scope=scope.as_dict(),
        candidates=tuple(candidates),
        chosen=chosen[0].name if chosen else None,
        chosen_backend=chosen[0].backend if chosen else None,
        chosen_device=chosen[1].device_type if chosen and chosen[1] else None,
        executed=executed,
        from_cache=from_cache,
        simulated=plan.simulated,
        data_movement=movement,
        signature=signature_text(the_op, args),
        basis=plan.basis,
    )
