"""What the tuner measures: the eligible variants of a call in the scope in force, each ready
to run as dispatch would run it (moves, result brought back, backend synchronized)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prism_core.kernel.contract.variant import VariantImportError
from prism_core.kernel.dispatch.arguments import array_args, array_dtypes, elements, tuning_dtype
from prism_core.kernel.dispatch.calls import build_plan
from prism_core.kernel.dispatch.moves import NO_MOVES, Moves, convert
from prism_core.kernel.dispatch.plans import executor
from prism_core.kernel.dispatch.registry import as_op, ensure_ready, generation
from prism_core.kernel.dispatch.scope import current_scope
from prism_core.kernel.threads import entering

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend

__all__ = ["Candidates", "Runner", "candidates"]


@dataclass(frozen=True)
class Runner:
    """One eligible variant of a call, ready to run as dispatch would run it: with the moves of
    its arguments and of its result, and waiting for its backend to finish (``synchronize``),
    so that timing ``run()`` times what a caller gets."""

    variant: str
    backend: str
    device: str | None
    run: Callable[[], Any]
    #: Whether the backend compiles per input shape (``Backend.compiles``): the first call
    #: at a shape then includes a compilation, which tuning reports apart.
    compiles: bool = False


@dataclass(frozen=True)
class Candidates:
    """The variants a call chooses among in the scope in force, in the declared order (the
    order without measurements), and what a tuning record of the call is keyed by."""

    op: str
    runners: tuple[Runner, ...]
    #: Variants that cannot run this call (rejected, or whose ``can_run`` declines it).
    skipped: tuple[str, ...]
    devices: str
    variants: tuple[str, ...]
    dtype: str | None
    bucket: int


def candidates(op: Any, args: Sequence[Any], kwargs: dict[str, Any] | None = None) -> Candidates:
    """The eligible variants of ``op(*args, **kwargs)`` in the scope in force, each as a
    :class:`Runner`, in declared order (tuned times do not reorder them)."""
    from prism_core.kernel.plugins import plugins

    the_op = as_op(op)
    kw = dict(kwargs or {})
    ensure_ready()
    scope = current_scope()
    plan = build_plan(the_op, None, scope, args, generation(), measured=False)
    backends = plugins().backends
    runners: list[Runner] = []
    skipped = [f"{c.variant}: {'; '.join(c.reasons)}" for c in plan.rejected]
    for variant, dev, _backend in plan.ranked:
        if variant.can_run is not None:  # placement was asked when the plan was built
            verdict = variant.can_run(*args, **kw)
            if verdict is not True:
                skipped.append(f"{variant.name}: {verdict or 'can_run said no'}")
                continue
        runs = executor(plan, variant)
        try:
            fn = runs.resolve()
        except VariantImportError as exc:
            skipped.append(f"{variant.name}: {exc}")
            continue
        runners.append(
            Runner(
                variant.name,
                runs.backend,
                dev.device_type if dev is not None else None,
                _runner(
                    fn,
                    args,
                    kw,
                    plan.moves.get(variant.name, NO_MOVES),
                    backends.get(runs.backend),
                ),
                getattr(backends.get(runs.backend), "compiles", False),
            )
        )
    dtype = tuning_dtype(array_dtypes(the_op, args))
    return Candidates(
        the_op.name,
        tuple(runners),
        tuple(skipped),
        "+".join(sorted({d.device_type for _, d, _ in plan.ranked if d is not None})),
        tuple(sorted(v.name for v, _, _ in plan.ranked)),
        dtype,
        sum(elements(a) for a in array_args(the_op, args)).bit_length(),
    )


def _runner(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    moves: Moves,
    backend: Backend | None,
) -> Callable[[], Any]:
    name = backend.name if backend is not None else ""
    converters = moves.converters
    result = moves.result
    call_args = tuple(args)

    def run() -> Any:
        entering(name)  # as a call does: the other backends' idle pools are released
        out = (
            fn(*convert(call_args, converters), **kwargs)
            if converters
            else fn(*call_args, **kwargs)
        )
        if backend is not None:
            backend.synchronize(out)  # the time is the work's, also on a device that runs async
        if result is not None:
            out = result(out)
        return out

    return run
