"""The scheduler side: announce workers joining and leaving to Prism's clients, and hand a worker
that advertises late the tasks that waited for what it can do.

A :class:`~prism_core.distributed.PrismClient` routes by a cached view of the workers.  A worker
that closes announces it from its plugin's teardown, but one that dies (killed, out of memory,
its machine gone) says nothing; the scheduler notices, and :class:`PrismSchedulerPlugin` tells
the clients on the ``prism-workers`` event topic, so that they read the cluster again before
routing another task.

A routed task asks for a ``prism:capability:...`` resource, and waits in Dask's ``no-worker``
state while no worker holds it (its only worker was killed).  Dask looks for a worker for such
tasks when a worker registers or resumes, not when a worker's resources change; a worker whose
Prism plugin comes from the client (no ``--preload``, as in ``connect()``'s ``LocalCluster``)
gets its resources only after it registered.  So when a worker announces that it advertised,
the plugin runs Dask's own search for that worker (what Dask runs when a worker registers), and
the worker a nanny started in place of a killed one takes the task.

The client registers it when it connects; that needs Prism importable on the scheduler too.
Where it is not, the registration fails, the client says so in its log and relies on the
workers' own announcements and on reading the cluster every ``refresh_interval`` (2 s); tasks
then wait for a worker that advertises late (workers started with the preload do not: they
register with their resources).  A scheduler can also load it itself: ``dask scheduler
--preload prism_core.distributed.preload``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from distributed.core import Status
from distributed.diagnostics.plugin import SchedulerPlugin

from prism_core.distributed.worker import PLUGIN_NAME, TOPIC

if TYPE_CHECKING:
    from distributed import Scheduler

__all__ = ["PrismSchedulerPlugin"]

logger = logging.getLogger("prism_core")


class PrismSchedulerPlugin(SchedulerPlugin):
    """Announce on ``prism-workers`` every worker that joins or leaves the cluster, and give a
    worker that advertised the tasks waiting in ``no-worker`` that it can run."""

    name = PLUGIN_NAME
    idempotent = True

    __module__ = "prism_core.distributed"

    def __init__(self) -> None:
        self._scheduler: Scheduler | None = None

    async def start(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler

    def add_worker(self, scheduler: Scheduler, worker: str) -> None:
        scheduler.log_event(TOPIC, {"action": "joined", "worker": worker})

    def remove_worker(
        self, scheduler: Scheduler, worker: str, *, stimulus_id: str, **kwargs: Any
    ) -> None:
        scheduler.log_event(TOPIC, {"action": "removed", "worker": worker})

    def log_event(self, topic: str, msg: Any) -> None:
        scheduler = self._scheduler
        if (
            topic != TOPIC
            or scheduler is None
            or not isinstance(msg, dict)
            or msg.get("action") != "advertised"
            or not scheduler.unrunnable
        ):
            return
        # The scheduler names the worker that sent an event (its address, as `workers` keys).
        ws = scheduler.workers.get(str(msg.get("worker")))
        if ws is None or ws.status != Status.running:
            return  # gone, or paused: Dask searches again when it resumes
        # Dask's own search when a worker joins; a Dask without it leaves the task waiting, as
        # before, and a failure here must not reach the scheduler's event handling.
        search = getattr(scheduler, "bulk_schedule_unrunnable_after_adding_worker", None)
        if search is None:
            return
        try:
            scheduler.transitions(search(ws), stimulus_id=f"prism-advertised-{time.time()}")
        except Exception:
            logger.exception("prism: could not hand waiting tasks to %s", ws.address)
