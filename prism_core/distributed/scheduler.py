"""The scheduler side: announce workers joining and leaving to Prism's clients.

A :class:`~prism_core.distributed.PrismClient` routes by a cached view of the workers.  A worker
that closes announces it from its plugin's teardown, but one that dies (killed, out of memory,
its machine gone) says nothing; the scheduler notices, and :class:`PrismSchedulerPlugin` tells
the clients on the ``prism-workers`` event topic, so that they read the cluster again before
routing another task.

The client registers it when it connects; that needs Prism importable on the scheduler too.
Where it is not, the registration fails, the client says so in its log and relies on the
workers' own announcements and on reading the cluster every ``refresh_interval`` (2 s).  A
scheduler can also load it itself: ``dask scheduler --preload prism_core.distributed.preload``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from distributed.diagnostics.plugin import SchedulerPlugin

from prism_core.distributed.worker import PLUGIN_NAME, TOPIC

if TYPE_CHECKING:
    from distributed import Scheduler

__all__ = ["PrismSchedulerPlugin"]


class PrismSchedulerPlugin(SchedulerPlugin):
    """Announce on ``prism-workers`` every worker that joins or leaves the cluster."""

    name = PLUGIN_NAME
    idempotent = True

    __module__ = "prism_core.distributed"

    def add_worker(self, scheduler: Scheduler, worker: str) -> None:
        scheduler.log_event(TOPIC, {"action": "joined", "worker": worker})

    def remove_worker(
        self, scheduler: Scheduler, worker: str, *, stimulus_id: str, **kwargs: Any
    ) -> None:
        scheduler.log_event(TOPIC, {"action": "removed", "worker": worker})
