"""Prism on a Dask cluster: tasks routed to the workers whose devices can run them.

Every worker advertises its devices (:class:`PrismWorkerPlugin`); :class:`PrismClient` sends a
task that asks for a capability (``pc.submit(fn, x, requires={"vendor": "nvidia"})``,
``pc.run_op("linalg.svd", m)``) only to the workers that have it, to run there under that
device, and raises :class:`NoWorkerError` at once, with every worker's reasons, when none does:
plain Dask would wait forever.  Dask is an optional extra (``pip install
'prism-core[distributed]'``); ``import prism_core`` never imports it.  The guide is
docs/distributed.md.
"""

from __future__ import annotations

try:
    import distributed as _distributed  # noqa: F401  (checked here, used by the modules below)
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without Dask
    raise ImportError(
        "prism_core.distributed needs Dask's distributed scheduler, which is not installed "
        f"({exc}); install it with: pip install 'prism-core[distributed]'"
    ) from exc

from prism_core.distributed.advert import (
    RESOURCE_PREFIX,
    WorkerDescription,
    WorkerDevice,
)
from prism_core.distributed.client import PrismClient, connect
from prism_core.distributed.routing import ClusterView, NoWorkerError, Route, WorkerScope
from prism_core.distributed.scheduler import PrismSchedulerPlugin
from prism_core.distributed.task import PrismCall, TaskResult
from prism_core.distributed.worker import TOPIC, PrismWorkerPlugin, worker_description

__all__ = [
    "RESOURCE_PREFIX",
    "TOPIC",
    "ClusterView",
    "NoWorkerError",
    "PrismCall",
    "PrismClient",
    "PrismSchedulerPlugin",
    "PrismWorkerPlugin",
    "Route",
    "TaskResult",
    "WorkerDescription",
    "WorkerDevice",
    "WorkerScope",
    "connect",
    "worker_description",
]
