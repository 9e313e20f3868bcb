"""Where a layer above dispatch takes a call over, in a context: the pipeline layer's planner
and its lenient stages (``prism_core._pipeline``; the types are ``contract/extension_points``).
Dispatch reads these only off the hot path (a cache miss, a failure)."""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prism_core.kernel.contract.extension_points import Planner, Rescuer
    from prism_core.kernel.dispatch.registry import Op

__all__ = ["LENIENT", "PLANNING"]

#: While a pipeline is planned (``explain``): called by a call that has no cached plan, instead
#: of running it.  Planning puts in force scopes no plan is keyed by, so every call misses.
PLANNING: contextvars.ContextVar[Planner[Op] | None] = contextvars.ContextVar(
    "prism_planning", default=None
)
#: While a stage with a preferred placement runs in automatic mode: called when the placement in
#: scope cannot run a call (no variant there: ``DispatchError``; its variant failed:
#: ``BackendError``) or a placed function (its placement failed).
LENIENT: contextvars.ContextVar[Rescuer | None] = contextvars.ContextVar(
    "prism_lenient", default=None
)
