"""The worker side: a Dask worker plugin that detects the worker's devices and advertises them.

:class:`PrismWorkerPlugin` runs ``setup(worker)`` on every worker, present and future: it
describes the worker (``advert.describe_worker``: its devices, and those it simulates), adds
the Dask resources they make (``prism:<device type>``, ``prism:<kind>``,
``prism:capability:<digest>``), keeps the description for ``client.run(worker_description)``
and announces it on the event topic ``prism-workers``.  Detection runs in a thread, off the
worker's event loop.  docs/distributed.md: "What a worker advertises", "Simulated devices".
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from distributed.core import Status
from distributed.diagnostics.plugin import WorkerPlugin

from prism_core.distributed.advert import describe_worker
from prism_core.kernel import config as _config

if TYPE_CHECKING:
    from distributed import Worker

__all__ = ["PLUGIN_NAME", "TOPIC", "PrismWorkerPlugin", "worker_description"]

#: The name the plugin is registered under on every worker (one per worker: a new registration
#: replaces the old one).
PLUGIN_NAME = "prism"
#: The Dask event topic on which workers announce that they advertised or withdrew.
TOPIC = "prism-workers"

_REGISTERED = (Status.running, Status.paused, Status.closing_gracefully)


def _device_types(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(
            f"PrismWorkerPlugin(simulate=...): {what} must be a list of device types such as "
            f"['nvidia.h100-pcie'], got {value!r} ({type(value).__name__})"
        )
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise TypeError(
                f"PrismWorkerPlugin(simulate=...): {what} holds {item!r}, which is not a device "
                "type; device types are non-empty strings such as 'nvidia.h100-pcie'"
            )
    return tuple(item.strip() for item in value)


class PrismWorkerPlugin(WorkerPlugin):
    """Detect the worker's devices and advertise them as Dask resources and a description.

    :param simulate: device types to advertise as simulated devices, besides the present
        ones: a list for every worker (``["nvidia.h100-pcie"]``; a type listed twice is two
        devices), or a mapping of worker name to such a list (``{"gpu-0":
        ["nvidia.h100-pcie"]}``; workers not named simulate nothing).  ``None`` (the default):
        each worker's ``PRISM_SIMULATE_DEVICES``.  A device type given here that no description
        defines makes ``setup`` raise (registering the plugin then fails with the reason);
        one from the environment is left out with a note in the worker's description.

    ``idempotent`` is true without ``simulate``: registering the plain plugin again (every
    :class:`PrismClient` does when it connects) keeps the one already registered, whose
    options someone chose.
    """

    name = PLUGIN_NAME

    __module__ = "prism_core.distributed"

    def __init__(self, simulate: Sequence[str] | Mapping[str, Sequence[str]] | None = None) -> None:
        self.simulate: tuple[str, ...] | dict[str, tuple[str, ...]] | None
        if simulate is None:
            self.simulate = None
        elif isinstance(simulate, Mapping):
            self.simulate = {
                str(worker): _device_types(types, f"simulate[{worker!r}]")
                for worker, types in simulate.items()
            }
        else:
            self.simulate = _device_types(simulate, "simulate")
        self.idempotent = simulate is None
        #: The worker's description as plain data (``WorkerDescription.as_dict``), once set up.
        self.description: dict[str, Any] | None = None
        self._resources: dict[str, float] = {}

    def _simulated_here(self, worker: Worker) -> tuple[tuple[str, ...], bool]:
        """The device types this worker simulates, and whether they were named explicitly."""
        if self.simulate is None:
            return _config.simulated_devices(), False
        if isinstance(self.simulate, dict):
            return self.simulate.get(str(worker.name), ()), True
        return self.simulate, True

    async def setup(self, worker: Worker) -> None:
        """Describe the worker, add its resources, keep the description and announce it."""
        simulate, explicit = self._simulated_here(worker)
        address = str(worker.contact_address or worker.address)
        described = await asyncio.to_thread(
            describe_worker, address, str(worker.name), simulate, strict=explicit
        )
        resources = dict(described.resources)
        stale = {k: 0.0 for k in self._resources if k not in resources}
        await _set_resources(worker, {**stale, **resources})
        self._resources = resources
        self.description = described.as_dict()
        if worker.status in _REGISTERED:
            worker.log_event(TOPIC, {"action": "advertised", "worker": address})

    async def teardown(self, worker: Worker) -> None:
        """Withdraw the resources (the plugin was removed or replaced; a closing worker takes
        them away with it) and announce it."""
        self.description = None
        if worker.status in _REGISTERED:
            await _set_resources(worker, dict.fromkeys(self._resources, 0.0))
            self._resources = {}
            worker.log_event(TOPIC, {"action": "withdrawn", "worker": str(worker.address)})
        elif worker.status == Status.closing:
            # A closing worker's stream to the scheduler is still open here: clients hear that
            # it leaves before they route to it again.
            worker.log_event(TOPIC, {"action": "leaving", "worker": str(worker.address)})


async def _set_resources(worker: Worker, resources: Mapping[str, float]) -> None:
    """Give ``worker`` these resources: through the scheduler once the worker is registered,
    else in the state its registration will send (a preloaded plugin runs before it)."""
    if not resources:
        return
    if worker.status in _REGISTERED:
        await worker.set_resources(**resources)
        return
    state = worker.state
    for name, quantity in resources.items():
        used = state.total_resources.get(name, 0.0) - state.available_resources.get(name, 0.0)
        state.total_resources[name] = quantity
        state.available_resources[name] = quantity - used


def worker_description(dask_worker: Worker) -> dict[str, Any] | None:
    """The description this worker advertises (plain data), or ``None`` when Prism's plugin is
    not set up here (yet).  For ``client.run(worker_description)``."""
    plugin = dask_worker.plugins.get(PLUGIN_NAME)
    if not isinstance(plugin, PrismWorkerPlugin):
        return None
    return plugin.description
