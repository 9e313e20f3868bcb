"""What a Dask worker advertises: its devices (present and simulated), its backends, and the
Dask resources they make.

A worker describes itself once, when Prism's worker plugin is set up there, with the functions
every Prism process uses.  The description travels as plain data
(:meth:`WorkerDescription.as_dict`) and carries each device's resolved description document,
so that the client matches requirements against what the worker would dispatch against.
Nothing here imports Dask.  docs/distributed.md, "What a worker advertises".
"""

from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.errors import PrismError, UnknownDeviceError, describe_exception
from prism_core.kernel.version import __version__

__all__ = [
    "CAPABILITY_PREFIX",
    "FORMAT",
    "RESOURCE_PREFIX",
    "WorkerDescription",
    "WorkerDevice",
    "describe_worker",
    "resources_of",
]

#: The prefix of the Dask resources Prism advertises: ``prism:<device type>`` and
#: ``prism:<kind>``, each the number of such devices on the worker (``prism:gpu: 2``).
RESOURCE_PREFIX = "prism:"
#: The prefix of the resource that names what a worker can do: ``prism:capability:<digest>`` of
#: its devices and backends, the same for a worker its nanny restarted (and for any worker
#: with the same devices and backends).  Tasks are routed by it where they can (see
#: ``PrismClient``), so that such a worker takes the tasks of the one it replaces.  Each worker
#: holds ``CAPABILITY_HELD`` of it and a task asks for one: it never limits how many run.
CAPABILITY_PREFIX = RESOURCE_PREFIX + "capability:"
CAPABILITY_HELD = float(2**31)
#: The version of the advertised data; a client reads only the format it knows.
FORMAT = 1


@dataclass(frozen=True)
class WorkerDevice:
    """Devices of one description on one worker: ``count`` of them, present or simulated.

    ``description`` is the worker's resolved description (its ``origin`` names the worker).
    ``memory_bytes`` is each device's memory (what detection found, else what the
    description states).  ``names`` are the instances' names (``"AMD EPYC 9654"``,
    ``"simulated NVIDIA H100 PCIe"``).
    """

    description: DeviceDescription
    count: int = 1
    names: tuple[str, ...] = ()
    memory_bytes: int | None = None
    simulated: bool = False

    __module__ = "prism_core.distributed"

    @property
    def device_type(self) -> str:
        return self.description.device_type

    @property
    def kind(self) -> str | None:
        return self.description.kind

    @property
    def vendor(self) -> str | None:
        return self.description.vendor

    @property
    def label(self) -> str:
        """``nvidia.h100-pcie (simulated)``, ``generic.x86-64-v4 x2``: how explanations name it."""
        text = self.device_type + (f" x{self.count}" if self.count != 1 else "")
        return text + (" (simulated)" if self.simulated else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "device_type": self.device_type,
            "kind": self.kind,
            "vendor": self.vendor,
            "count": self.count,
            "names": list(self.names),
            "memory_bytes": self.memory_bytes,
            "simulated": self.simulated,
            "lineage": list(self.description.lineage),
            "parents": list(self.description.parents),
            "description": _plain(self.description.to_dict()),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], origin: str = "advertised") -> WorkerDevice:
        device_type = str(data["device_type"])
        description = DeviceDescription(
            device_type=device_type,
            data=dict(data["description"]),
            origin=origin,
            parents=tuple(data.get("parents", ())),
            lineage=tuple(data.get("lineage", ())) or (device_type,),
        )
        memory = data.get("memory_bytes")
        return cls(
            description=description,
            count=int(data.get("count", 1)),
            names=tuple(str(n) for n in data.get("names", ())),
            memory_bytes=None if memory is None else int(memory),
            simulated=bool(data.get("simulated", False)),
        )


@dataclass(frozen=True)
class WorkerDescription:
    """What one worker advertises: its devices, backends, Dask resources and notes.

    ``devices`` lists the present devices first (the host CPU, then accelerators, in detection
    order), then the simulated ones.  ``backends`` maps each installed backend to the
    requirement mapping of the devices it drives (``{"kind": "cpu"}``); installed, not
    necessarily available (asking would import the frameworks at worker start).  ``notes``
    say what is missing and why (a detection that failed, a simulated device type that no
    description defines).
    """

    address: str
    name: str
    devices: tuple[WorkerDevice, ...] = ()
    backends: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))
    resources: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    host: str = ""
    prism_version: str = __version__
    notes: tuple[str, ...] = ()

    __module__ = "prism_core.distributed"

    @property
    def simulated(self) -> bool:
        """Whether any of its devices is simulated."""
        return any(d.simulated for d in self.devices)

    @property
    def capability(self) -> str | None:
        """Its ``prism:capability:...`` resource (``None`` from a worker that has none)."""
        return next((k for k in self.resources if k.startswith(CAPABILITY_PREFIX)), None)

    def summary(self) -> str:
        """``generic.x86-64-v4, nvidia.h100-pcie (simulated)``: its devices in one line."""
        return ", ".join(d.label for d in self.devices) or "no device"

    def as_dict(self) -> dict[str, Any]:
        """Plain data (JSON-safe): what travels from the worker to the client."""
        return {
            "format": FORMAT,
            "address": self.address,
            "name": self.name,
            "host": self.host,
            "prism_version": self.prism_version,
            "devices": [d.as_dict() for d in self.devices],
            "backends": {k: {"drives": _plain(v)} for k, v in self.backends.items()},
            "resources": dict(self.resources),
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorkerDescription:
        """The description :meth:`as_dict` made.  Raises :class:`PrismError` for another
        format (a worker with another version of Prism) or data that is not a description."""
        if not isinstance(data, Mapping):
            raise PrismError(f"a worker description is a mapping, got {type(data).__name__}")
        fmt = data.get("format")
        if fmt != FORMAT:
            raise PrismError(
                f"the worker advertises description format {fmt!r} (Prism "
                f"{data.get('prism_version', 'unknown')}); this client reads format {FORMAT} "
                f"(Prism {__version__}): install the same prism-core on the client and the workers"
            )
        address = str(data["address"])
        origin = f"advertised by worker {address}"
        return cls(
            address=address,
            name=str(data.get("name", address)),
            devices=tuple(WorkerDevice.from_dict(d, origin) for d in data.get("devices", ())),
            backends=MappingProxyType(
                {str(k): dict(v.get("drives", {})) for k, v in data.get("backends", {}).items()}
            ),
            resources=MappingProxyType(
                {str(k): float(v) for k, v in data.get("resources", {}).items()}
            ),
            host=str(data.get("host", "")),
            prism_version=str(data.get("prism_version", "")),
            notes=tuple(str(n) for n in data.get("notes", ())),
        )


def _plain(value: Any) -> Any:
    """``value`` as JSON would give it back: plain dicts, lists, strings and numbers, so that
    it survives msgpack and pickle alike."""
    return json.loads(json.dumps(value, default=str))


def resources_of(devices: Iterable[WorkerDevice]) -> dict[str, float]:
    """The Dask resources ``devices`` make: ``prism:<device type>`` and ``prism:<kind>``, each
    the number of such devices (simulated ones included: routing plans made with them carry
    over to the real devices)."""
    out: dict[str, float] = {}
    for dev in devices:
        for name in (dev.device_type, dev.kind):
            if name:
                key = RESOURCE_PREFIX + name
                out[key] = out.get(key, 0.0) + dev.count
    return out


def capability_of(
    devices: Iterable[WorkerDevice], backends: Mapping[str, Mapping[str, Any]]
) -> str:
    """The ``prism:capability:<digest>`` resource of a worker with ``devices`` and ``backends``:
    a digest of what routing reads of them (device types, counts, simulated or not; the
    backends and the devices they drive; Prism's version), not of the worker's address or
    name."""
    what = {
        "prism": __version__,
        "devices": sorted((d.device_type, d.count, d.simulated) for d in devices),
        "backends": _plain({k: backends[k] for k in sorted(backends)}),
    }
    digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()
    return CAPABILITY_PREFIX + digest[:16]


def describe_worker(
    address: str,
    name: str,
    simulate: Sequence[str] = (),
    *,
    strict: bool = False,
) -> WorkerDescription:
    """Describe the worker this process is: its present devices, the ``simulate`` ones, its
    installed backends and the resources they make.

    ``strict`` is for device types the caller named explicitly (the plugin's ``simulate=``):
    an unknown or abstract one raises :class:`PrismError` naming it (and close matches).
    Otherwise (``PRISM_SIMULATE_DEVICES`` on the worker, which the client cannot fix) it is
    left out with a note, as is a detection that fails: a worker always describes itself.
    """
    from prism_core.kernel.devices import default_library
    from prism_core.kernel.host import present_devices
    from prism_core.kernel.plugins import plugins

    notes: list[str] = []
    groups: dict[tuple[str, bool], list[Any]] = {}
    descriptions: dict[str, DeviceDescription] = {}
    try:
        found = present_devices()
    except Exception as exc:  # a broken library or plugin: say so, advertise what is left
        notes.append(f"device detection failed: {describe_exception(exc)}")
    else:
        for inst in found.devices:
            descriptions[inst.device_type] = inst.description
            groups.setdefault((inst.device_type, False), []).append(
                (inst.name, inst.memory_bytes or inst.description.memory_bytes)
            )
        notes.extend(f"{who}: {why}" for who, why in sorted(found.notes.items()))
    if simulate:
        library = default_library()
        for device_type in simulate:
            try:
                desc = library.get(device_type)
            except UnknownDeviceError as exc:
                if strict:
                    # A plain PrismError: this one travels back to the client pickled, and
                    # UnknownDeviceError's own arguments are not its message.
                    raise PrismError(f"simulate: {exc}") from None
                notes.append(f"PRISM_SIMULATE_DEVICES: {exc}")
                continue
            if desc.abstract:
                why = (
                    f"{device_type!r} is a family (abstract), not a device; name one of its "
                    "devices to simulate (`prism devices --all` lists them)"
                )
                if strict:
                    raise PrismError(f"simulate: {why}")
                notes.append(f"PRISM_SIMULATE_DEVICES: {why}")
                continue
            descriptions[desc.device_type] = desc
            groups.setdefault((desc.device_type, True), []).append(
                (f"simulated {desc.name}", desc.memory_bytes)
            )
    devices = tuple(
        WorkerDevice(
            description=descriptions[device_type],
            count=len(members),
            names=tuple(n for n, _ in members),
            memory_bytes=members[0][1],
            simulated=simulated,
        )
        for (device_type, simulated), members in sorted(groups.items(), key=lambda kv: kv[0][1])
    )
    try:
        backends = {b.name: dict(b.drives) for b in plugins().backends.values()}
    except Exception as exc:
        backends = {}
        notes.append(f"plugin discovery failed: {describe_exception(exc)}")
    resources = resources_of(devices)
    resources[capability_of(devices, backends)] = CAPABILITY_HELD
    return WorkerDescription(
        address=address,
        name=name,
        devices=devices,
        backends=MappingProxyType(backends),
        resources=MappingProxyType(resources),
        host=socket.gethostname(),
        notes=tuple(notes),
    )
