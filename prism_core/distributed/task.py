"""What a routed task runs on the worker: the user's function or a Prism op, under the device
its route chose there.

:class:`PrismCall` wraps the function (or names the op) with the task's :class:`WorkerScope`,
one for every qualifying worker or one per worker where they differ; on the worker it enters
``prism.device(...)`` of it (in automatic mode it calls directly), and it tokenizes as the
function and its placement.  With ``report=True`` a task returns a :class:`TaskResult`, which
is how results computed on a simulated device are labelled.  docs/distributed.md, "Routing"
and "Simulated devices".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dask.tokenize import normalize_token
from dask.utils import funcname

from prism_core.distributed.routing import WorkerScope
from prism_core.kernel import events as events

__all__ = ["PrismCall", "TaskResult"]


@dataclass(frozen=True)
class TaskResult:
    """A task's value with where it ran: what ``report=True`` tasks return.

    ``device`` is the device the task ran under (its route's placement, or for an op in
    automatic mode the device dispatch chose); ``simulated`` says that device was simulated, so
    the value came from the op's reference implementation on the worker's CPU.  ``variant`` is
    the variant that executed (ops only).  ``seconds`` is the time of the call on the worker.
    """

    value: Any
    worker: str
    worker_name: str = ""
    device: str | None = None
    simulated: bool = False
    op: str | None = None
    variant: str | None = None
    seconds: float = 0.0

    __module__ = "prism_core.distributed"


_local = threading.local()


def _scope(placement: WorkerScope) -> Any:
    """The ``prism.device`` block of ``placement``, made once per thread and generation (the
    block checks the device when it is made; devices loaded again make it anew)."""
    from prism_core.kernel.dispatch.scope import device

    key = (placement.device_type, placement.simulated, events.generation())
    cache: dict[Any, Any] | None = getattr(_local, "scopes", None)
    if cache is None:
        cache = _local.scopes = {}
    block = cache.get(key)
    if block is None:
        cache.clear()  # an older generation's blocks are done with
        block = cache[key] = device(str(placement.device_type), simulate=placement.simulated)
    return block


_ops: dict[str, tuple[int, Callable[..., Any]]] = {}


def _op_function(name: str) -> Callable[..., Any]:
    """The function users call for op ``name`` in this process (an :class:`OperationError`
    names close matches when the worker does not know it)."""
    now = events.generation()
    cached = _ops.get(name)
    if cached is not None and cached[0] == now:
        return cached[1]
    from prism_core.kernel.dispatch.ops import get_op

    fn: Callable[..., Any] = get_op(name).function
    _ops[name] = (now, fn)
    return fn


def _this_worker() -> Any:
    from distributed import get_worker

    try:
        return get_worker()
    except ValueError:  # called outside a task (a test, a local call)
        return None


class PrismCall:
    """The callable of a routed task: ``fn`` (or the op named ``op``) under ``placement``.

    ``placement`` is one :class:`WorkerScope` for every worker, a plain dict of worker address to
    placement where they differ, or ``None`` (automatic mode).  ``report=True`` returns a
    :class:`TaskResult` instead of the bare value.
    """

    __module__ = "prism_core.distributed"

    def __init__(
        self,
        fn: Callable[..., Any] | None,
        *,
        op: str | None = None,
        placement: WorkerScope | Mapping[str, WorkerScope] | None = None,
        report: bool = False,
    ) -> None:
        if (fn is None) == (op is None):
            raise TypeError("PrismCall runs a function or an op: give exactly one of fn and op")
        self.fn = fn
        self.op = op
        self.placement: WorkerScope | dict[str, WorkerScope] | None = (
            dict(placement) if isinstance(placement, Mapping) else placement
        )
        self.report = report
        # Dask names a task after its function (the key's prefix): the user's, not ours.
        self.__name__ = op if op is not None else funcname(fn)

    def _placement(self, worker: Any) -> WorkerScope | None:
        placement = self.placement
        if isinstance(placement, dict):
            address = getattr(worker, "address", None)
            if address not in placement:
                from prism_core.kernel.errors import PrismError

                raise PrismError(
                    f"this task was routed to {sorted(placement)}, not to worker {address!r}; "
                    "it was placed by hand (workers=, allow_other_workers=True)?"
                )
            return placement[address]
        return placement

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        placement = (
            self._placement(_this_worker())
            if isinstance(self.placement, dict)
            else (self.placement)
        )
        target = self.fn if self.op is None else _op_function(self.op)
        assert target is not None
        if self.report:
            return self._reported(target, placement, args, kwargs)
        if placement is None or placement.device_type is None:
            return target(*args, **kwargs)
        with _scope(placement):
            return target(*args, **kwargs)

    def _reported(
        self,
        target: Callable[..., Any],
        placement: WorkerScope | None,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> TaskResult:
        worker = _this_worker()
        scoped = placement is not None and placement.device_type is not None
        variant = device = None
        simulated = False
        if scoped:
            assert placement is not None
            device, simulated = placement.device_type, placement.simulated
        start = time.perf_counter()
        if scoped:
            assert placement is not None
            with _scope(placement):
                value = target(*args, **kwargs)
                seconds = time.perf_counter() - start
                if self.op is not None:
                    variant, device = _decided(self.op, args, kwargs, device)
        else:
            value = target(*args, **kwargs)
            seconds = time.perf_counter() - start
            if self.op is not None:
                variant, device = _decided(self.op, args, kwargs, None)
        return TaskResult(
            value=value,
            worker=str(getattr(worker, "address", "")),
            worker_name=str(getattr(worker, "name", "")),
            device=device,
            simulated=simulated,
            op=self.op,
            variant=variant,
            seconds=seconds,
        )

    def __dask_tokenize__(self) -> Any:
        placement = self.placement
        if isinstance(placement, dict):
            placed: Any = tuple(sorted((a, _key(p)) for a, p in placement.items()))
        else:
            placed = None if placement is None else _key(placement)
        what = self.op if self.op is not None else normalize_token(self.fn)
        return ("prism_core.distributed.PrismCall", what, placed, self.report)

    def __repr__(self) -> str:
        what = f"op {self.op!r}" if self.op is not None else self.__name__
        return f"<PrismCall {what} {self.placement}>"


def _key(placement: WorkerScope) -> tuple[str | None, bool]:
    return (placement.device_type, placement.simulated)


def _decided(
    op: str, args: tuple[Any, ...], kwargs: dict[str, Any], device: str | None
) -> tuple[str | None, str | None]:
    """The variant that ran ``op`` for these arguments in the scope in force, and the device
    (``device`` where the route named one, else dispatch's choice)."""
    from prism_core.kernel.dispatch.ops import explain

    decision = explain(op, *args, **kwargs)
    return decision.executed or decision.chosen, device or decision.chosen_device
