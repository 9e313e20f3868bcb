"""The scheduler side: announce workers joining and leaving to Prism's clients, and hand a worker
that advertises late the tasks that waited for what it can do.

A worker that dies says nothing; :class:`PrismSchedulerPlugin` tells the clients on the
``prism-workers`` topic, so that they read the cluster again.  Dask looks for a worker for a
waiting task when a worker registers, not when its resources change, so when a worker
announces that it advertised, the plugin runs Dask's own search for that worker.  The client
registers it (Prism must be importable on the scheduler), or ``--preload
prism_core.distributed.preload`` does.  docs/distributed.md, "Workers joining and leaving".
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
