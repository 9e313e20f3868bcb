"""Prism's plugins from a Dask server's start: ``--preload prism_core.distributed.preload``.

::

    dask scheduler --preload prism_core.distributed.preload
    dask worker tcp://scheduler:8786 --preload prism_core.distributed.preload

A worker then advertises its devices before any client connects, and a scheduler announces
workers joining and leaving.  docs/distributed.md, "A real cluster".
"""

from __future__ import annotations

from typing import Any

from distributed import Scheduler, Worker

from prism_core.distributed.scheduler import PrismSchedulerPlugin
from prism_core.distributed.worker import PLUGIN_NAME, PrismWorkerPlugin

__all__ = ["dask_setup"]


async def dask_setup(server: Any) -> None:
    """Dask's preload hook: add Prism's plugin to the worker or scheduler ``server`` (a failure
    stops its start with the reason, as a broken preload should)."""
    if isinstance(server, Worker):
        await server.plugin_add(PrismWorkerPlugin(), name=PLUGIN_NAME, catch_errors=False)
    elif isinstance(server, Scheduler):
        server.add_plugin(PrismSchedulerPlugin(), name=PLUGIN_NAME, idempotent=True)
    else:
        raise TypeError(
            "prism_core.distributed.preload is for `dask worker` and `dask scheduler` "
            f"(--preload), not for a {type(server).__name__}; a nanny needs nothing"
        )
