"""Prism on a Dask cluster: tasks routed to the workers whose devices can run them.

::

    import prism_core as prism

    with prism.distributed.connect(n_workers=2) as pc:          # a LocalCluster here
        future = pc.run_op("linalg.svd", matrix, requires={"kind": "cpu"})
        pc.submit(train, data, requires={"vendor": "nvidia", "tensor_cores": ">=4"})
        print(pc.explain({"vendor": "amd"}))                      # who qualifies, and why not

Every worker describes itself when Prism's worker plugin is set up there
(:class:`PrismWorkerPlugin`: the devices present, and those it simulates for testing), and
advertises them as Dask resources (``prism:<device type>``, ``prism:<kind>``) and as a
description the client reads.  :class:`PrismClient` matches a task's requirement mapping or op
against those descriptions, submits it to the qualifying workers only, where it runs under
``prism.device(...)`` of the device that qualified, and raises :class:`NoWorkerError` at once,
with every worker's reasons, when none does: plain Dask would wait forever.

Dask is an optional extra: ``pip install 'prism-core[distributed]'``.  ``import prism_core``
never imports it; ``prism_core.distributed`` (or ``prism.distributed``) does.  The guide is
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
