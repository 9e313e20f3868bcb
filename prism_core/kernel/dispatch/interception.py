"""Where a layer above dispatch takes a call over, in a context: the pipeline layer's planner
and its lenient stages (``prism_core._pipeline``).  Dispatch reads these only off the hot path
(a cache miss, a failure); it never imports what sets them."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.registry import Op

__all__ = ["LENIENT", "PLANNING", "Planner", "Rescued", "Rescuer"]


class Planner(Protocol):
    """Answers a call while a pipeline is planned, instead of running it: returns what stands
    for the result (an ``ArraySpec``)."""

    def __call__(self, op: Op, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...


class Rescued(Protocol):
    """What a rescuer runs elsewhere: an op, or a placed function (``prism_core.function``),
    by its ``name`` and the ``function`` that runs it in the scope in force."""

    @property
    def name(self) -> str: ...

    @property
    def function(self) -> Callable[..., Any]: ...


class Rescuer(Protocol):
    """Runs a call the scope in force cannot run (``error``: a ``DispatchError`` or
    ``BackendError``) somewhere else and returns its result, or raises ``error``."""

    def __call__(
        self, op: Rescued, args: tuple[Any, ...], kwargs: dict[str, Any], error: Exception
    ) -> Any: ...


#: While a pipeline is planned (``explain``): called by a call that has no cached plan, instead
#: of running it.  Planning puts in force scopes no plan is keyed by, so every call misses.
PLANNING: contextvars.ContextVar[Planner | None] = contextvars.ContextVar(
    "prism_planning", default=None
)
#: While a stage with a preferred placement runs in automatic mode: called when the placement in
#: scope cannot run a call (no variant there: ``DispatchError``; its variant failed:
#: ``BackendError``) or a placed function (its placement failed).
LENIENT: contextvars.ContextVar[Rescuer | None] = contextvars.ContextVar(
    "prism_lenient", default=None
)
