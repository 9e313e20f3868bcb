"""Host detection: the devices present on this host, each an instance of its description, and
the host's memory (its BLAS pools: ``prism_core._blas``; the report ``prism doctor`` shows:
``prism_core._host_report``).  The host CPU comes from
:mod:`prism_core.kernel.host_cpu`, accelerators from the plugins' ``prism_detect_devices`` hooks
(packages split by :mod:`prism_core.kernel.partition_match`).  docs/architecture.md, "Host
detection".
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import TYPE_CHECKING

from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.errors import PrismError
from prism_core.kernel.host_cpu import (
    CpuInfo,
    detect_cpu,
    library_or_default,
    match_cpu,
    name_fits,
)
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import DetectedDevice
    from prism_core.kernel.description.library import DeviceLibrary

__all__ = [
    "DeviceInstance",
    "PresentDevices",
    "host_cpu_instance",
    "match_detected_device",
    "physical_memory_bytes",
    "present_devices",
    "software_devices",
]


@home("prism_core.hardware")
@dataclass(frozen=True)
class DeviceInstance:
    """One device present on this host (or simulated), with the description it matches.

    ``index`` numbers the devices of one source (``0`` for the host CPU, else the driver's
    ordinal); ``source`` is ``"archspec"`` for the host CPU, else the plugin that found it;
    ``memory_bytes`` is what the device really has.  A partition of a detected package names the
    package's device type in ``package``; where Prism split the package, ``partition`` is the
    ordinal within it, ``index`` is ``package index * count + partition``, ``uuid`` the
    package's and ``memory_bytes`` its share (by the partitions' sizes, else equal); where the
    driver shows the partition itself, they are as reported and ``partition`` is ``None``.
    ``host_link`` is false for a partition without its own link to the host (an n300's R chip);
    ``driver`` is the driver version the detection reported.
    """

    description: DeviceDescription
    index: int
    name: str
    uuid: str | None
    memory_bytes: int | None
    source: str
    simulated: bool = False
    package: str | None = None
    partition: int | None = None
    driver: str | None = None
    host_link: bool = True

    @property
    def device_type(self) -> str:
        return self.description.device_type

    def as_dict(self) -> dict[str, object]:
        # Every field, the description by its device type.
        return {"device_type": self.device_type} | {
            f.name: getattr(self, f.name) for f in fields(self) if f.name != "description"
        }


def physical_memory_bytes() -> int | None:
    """The machine's physical memory (``os.sysconf``; not a container's limit), or ``None``."""
    try:
        pages, page_size = int(os.sysconf("SC_PHYS_PAGES")), int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # AttributeError: no os.sysconf (Windows)
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


def host_cpu_instance(
    library: DeviceLibrary | None = None, *, cpu: CpuInfo | None = None
) -> DeviceInstance:
    """The host CPU (``cpu``, default :func:`detect_cpu`) as a :class:`DeviceInstance` (index
    0), matched with :func:`match_cpu`; :class:`PrismError` when the library has no description
    for the host's family at all."""
    info = detect_cpu() if cpu is None else cpu
    match = match_cpu(info, library)
    if match.description is None:
        raise PrismError(match.reasons[-1])
    return DeviceInstance(
        description=match.description,
        index=0,
        name=info.brand or match.description.name,
        uuid=None,
        memory_bytes=physical_memory_bytes(),
        source=info.source,
    )


def _hint_score(
    desc: DeviceDescription, vendor_id: str | None, device_id: str | None, product_name: str | None
) -> int:
    """How many kinds of the hints written in ``desc``'s own file (PCI entries, product names)
    the detected device matches (0: none, or one contradicts it).  Inherited hints describe a
    family (NVIDIA's vendor id 0x10de) and can claim no particular device."""
    from prism_core.kernel.partition_match import own_product_names

    pci: list[tuple[str, tuple[str, ...]]] = []
    if desc.provenance.get("detection.pci") == desc.device_type:
        found = (desc.data.get("detection") or {}).get("pci") or ()
        pci = [(e["vendor_id"], tuple(e.get("device_ids", ()))) for e in found]
    names = own_product_names(desc)
    vendor = None if vendor_id is None else vendor_id.lower()
    if pci and vendor is not None and all(v != vendor for v, _ in pci):
        return 0  # another vendor's device, whatever its name says
    score = 0
    ids = {d for v, device_ids in pci if vendor is not None and v == vendor for d in device_ids}
    if ids:
        if device_id is None or device_id.lower() not in ids:
            return 0
        score += 1
    if names:
        # A description that names its products is never claimed without the name: PCI ids
        # are shared between models (0x740c: MI250 and MI250X; 0x401e: n150 and n300).
        name = product_name or ""
        if not name.strip() or not name_fits(names, name):
            return 0
        score += 1
    return score


def match_detected_device(
    library: DeviceLibrary | None = None,
    *,
    vendor_id: str | None = None,
    device_id: str | None = None,
    product_name: str | None = None,
    compute_units: int | None = None,
    memory_bytes: int | None = None,
) -> DeviceDescription | None:
    """The description of a device a driver reports: one PCI function (``vendor_id``,
    ``device_id`` as ``"0x10de"``-style strings) and the product name the driver gives it.

    A non-abstract description is a candidate when every kind of ``detection`` hint written in
    its own file matches: its PCI entry for ``vendor_id`` lists ``device_id``, one of its
    ``product_names`` matches the whole name ignoring case.  The most kinds matched wins, then
    the longest lineage, then the device type; ``None`` when nothing matches.  For a package
    (``partitions``), the ``compute_units`` and ``memory_bytes`` reported may show the device to
    be one partition (an MI300X in CPX mode: :func:`match_partition`), which is then the result.
    """
    lib = library_or_default(library)
    scored = [
        (score, desc)
        for desc in lib.list()
        if (score := _hint_score(desc, vendor_id, device_id, product_name)) > 0
    ]
    if not scored:
        return None
    scored.sort(key=lambda item: (-item[0], -len(item[1].lineage), item[1].device_type))
    found = scored[0][1]
    if found.partitions and (compute_units is not None or memory_bytes):
        from prism_core.kernel.partition_match import match_partition

        part = match_partition(
            found, lib, name=product_name, compute_units=compute_units, memory_bytes=memory_bytes
        )
        if part is not None:
            return part.description
    return found


def software_devices(
    description: DeviceDescription, library: DeviceLibrary | None = None, *, mode: str | None = None
) -> tuple[DeviceDescription, ...]:
    """The devices software sees of one detected ``description`` in partition ``mode`` (default:
    the first of its ``partitions``, the driver's default): ``(description,)`` without
    partitions, else the mode's parts in the file's order (two ``amd.mi250x-gcd`` for an
    ``amd.mi250x``).  :class:`LookupError` for a mode the description does not have."""
    part = description.partition(mode)
    if part is None:
        if mode is not None:
            raise LookupError(
                f"{description.device_type} has no partition mode {mode!r}; software sees it "
                "as one device"
            )
        return (description,)
    seen: list[DeviceDescription] = []
    for piece in part.parts:
        if piece.device_type == description.device_type:
            seen.extend([description] * piece.count)
        else:
            seen.extend([library_or_default(library).get(piece.device_type)] * piece.count)
    return tuple(seen)


@home("prism_core.hardware")
@dataclass(frozen=True)
class PresentDevices:
    """The devices present on this host, and each plugin's sentence: why it found none, or
    what it found and could not map (keyed ``plugin``, or ``plugin:device type:index``)."""

    devices: tuple[DeviceInstance, ...]
    notes: Mapping[str, str]


def present_devices(library: DeviceLibrary | None = None) -> PresentDevices:
    """Every device present on this host, each an instance of its description: the host CPU
    (:func:`host_cpu_instance`), then the plugins' ``prism_detect_devices`` (once per process).
    A detected device that is one partition of a package (:func:`match_partition`) is an
    instance of that partition; any other package is the devices software sees of it
    (:func:`software_devices`) in the detection's ``partition_mode``.  A device type or mode
    without a description is left out with a note; a ``uuid`` an earlier plugin reported is
    listed once.  Never raises for "nothing here"."""
    from prism_core.kernel.plugins import plugins

    lib = library_or_default(library)
    found: list[DeviceInstance] = []
    notes: dict[str, str] = {}
    try:
        found.append(host_cpu_instance(lib))
    except PrismError as exc:
        notes["host cpu"] = str(exc)
    seen_uuids: set[str] = set()
    for plugin, detection in plugins().detect(lib).items():
        for dev in detection.devices:
            if dev.uuid is not None:
                # Two plugins may find one GPU (the cuda and torch plugins both ask
                # nvidia-smi): the first plugin's instance stands for it.
                if dev.uuid in seen_uuids:
                    continue
                seen_uuids.add(dev.uuid)
            at = f"{plugin}:{dev.device_type}:{dev.index}"  # a plugin may find several vendors'
            if dev.device_type not in lib:
                notes[at] = (
                    f"{dev.name or dev.device_type}: no description of {dev.device_type!r} "
                    "on the search path"
                )
                continue
            try:
                found.extend(_instances(plugin, dev, lib.get(dev.device_type), lib))
            except LookupError as exc:
                notes[at] = f"{dev.name or dev.device_type}: {exc}"
        if detection.reason or not detection.devices:  # also what it found and could not map
            notes[plugin] = detection.reason or "no device found"
    return PresentDevices(tuple(found), MappingProxyType(notes))


def _instances(
    plugin: str, dev: DetectedDevice, package: DeviceDescription, lib: DeviceLibrary
) -> list[DeviceInstance]:
    """The instances one detected device of ``plugin`` stands for (:func:`present_devices`);
    :class:`LookupError` for a partition mode ``package`` does not have."""
    name = dev.name or dev.device_type
    one = functools.partial(
        DeviceInstance, uuid=dev.uuid, source=plugin, driver=dev.driver, name=name
    )
    if package.partitions:
        from prism_core.kernel.partition_match import match_partition

        part = match_partition(
            package,
            lib,
            name=dev.name or None,
            memory_bytes=dev.memory_bytes,
            mode=dev.partition_mode,
        )
        if part is not None and not part.whole:  # the driver shows the partition itself
            return [
                one(
                    description=part.description,
                    index=dev.index,
                    memory_bytes=dev.memory_bytes,
                    package=package.device_type,
                    host_link=part.part.host_link,
                )
            ]
    seen = software_devices(package, lib, mode=dev.partition_mode)
    mode = package.partition(dev.partition_mode)
    if mode is None or seen == (package,):
        return [one(description=package, index=dev.index, memory_bytes=dev.memory_bytes)]
    links = [p.host_link for p in mode.parts for _ in range(p.count)]
    shares = _memory_shares(dev.memory_bytes, seen)
    return [
        one(
            description=description,
            index=dev.index * len(seen) + i,
            name=f"{name} [{i}]",
            memory_bytes=shares[i],
            package=package.device_type,
            partition=i,
            host_link=links[i],
        )
        for i, description in enumerate(seen)
    ]


def _memory_shares(total: int | None, seen: tuple[DeviceDescription, ...]) -> list[int | None]:
    """``total`` bytes of a package shared among the devices ``seen`` of it: in proportion to
    their sizes where every description gives one (a MIG layout's 3g.40gb gets four times a
    1g.10gb's), never more than a device's own size; else equally."""
    if total is None:
        return [None] * len(seen)
    sizes = [d.memory_bytes or 0 for d in seen]
    if all(sizes):
        return [min(size, total * size // sum(sizes)) for size in sizes]
    return [total // len(seen)] * len(seen)
