"""Host detection: the devices present on this host, each an instance of its description, the
host's memory and BLAS, and the report ``prism doctor`` shows.

The host CPU and the description it matches come from :mod:`prism_core.kernel.host_cpu`;
accelerators from the plugins' ``prism_detect_devices`` hooks, matched here by their own
detection hints and split into the devices software sees of a package
(:mod:`prism_core.kernel.partition_match`).  BLAS thread pools go through threadpoolctl; it and
NumPy are imported inside the functions.  docs/architecture.md, "Host detection".
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import platform
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.errors import PrismError
from prism_core.kernel.host_cpu import CpuInfo, CpuMatch, detect_cpu, match_cpu, name_fits
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import DetectedDevice
    from prism_core.kernel.description.library import DeviceLibrary

__all__ = [
    "DeviceInstance",
    "HostReport",
    "PresentDevices",
    "available_memory_bytes",
    "blas_info",
    "blas_threads",
    "describe_host",
    "host_cpu_instance",
    "match_detected_device",
    "physical_memory_bytes",
    "present_devices",
    "software_devices",
]

#: The threadpoolctl keys :func:`blas_info` reports, when present.
_BLAS_KEYS = (
    "user_api",
    "internal_api",
    "version",
    "num_threads",
    "prefix",
    "filepath",
    "threading_layer",
    "architecture",
)


def _default_library(library: DeviceLibrary | None) -> DeviceLibrary:
    if library is not None:
        return library
    from prism_core.kernel.devices import default_library

    return default_library()


# -- device instances -------------------------------------------------------------------------


@home("prism_core.hardware")
@dataclass(frozen=True)
class DeviceInstance:
    """One device present on this host (or simulated), with the description it matches.

    ``index`` numbers the devices of one source (``0`` for the host CPU; the ordinal a plugin's
    driver uses for accelerators).  ``source`` is ``"archspec"`` for the host CPU, otherwise the
    name of the plugin that found the device.  ``memory_bytes`` is what the device really has
    (the host's physical memory for the CPU), which a description may not state.

    A device that is one partition of a detected package (a GCD of an MI250X, a logical
    NeuronCore of a Trainium2) names the package's device type in ``package``.  Where the
    package was reported and Prism split it, ``partition`` is the device's ordinal within the
    package, its ``index`` is ``package index * count + partition``, its ``uuid`` the package's
    and its ``memory_bytes`` the package's share by the partitions' sizes (equal shares where
    the descriptions do not give them).  Where the driver showed the partition itself (an
    MI300X XCD in CPX mode, a MIG instance: :func:`match_partition`), ``index``, ``uuid`` and
    ``memory_bytes`` are what the driver reported and ``partition`` is ``None``.
    ``host_link`` is false for a partition without a link of its own to the host (an n300's R
    chip).  ``driver`` is the version of the driver the detection reported (``None`` for the
    host CPU and where the plugin does not say).
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

    def as_dict(self) -> dict[str, Any]:
        # Every field, the description by its device type.
        return {"device_type": self.device_type} | {
            f.name: getattr(self, f.name) for f in fields(self) if f.name != "description"
        }


def physical_memory_bytes() -> int | None:
    """Total physical memory of the host (``os.sysconf``), or ``None`` where it is unknown.

    This is the machine's memory, not a container's memory limit.
    """
    sysconf = getattr(os, "sysconf", None)
    if sysconf is None:  # Windows
        return None
    try:
        pages = int(sysconf("SC_PHYS_PAGES"))
        page_size = int(sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError):
        return None
    if pages <= 0 or page_size <= 0:
        return None
    return pages * page_size


def _read_int(path: str, field: str | None = None) -> int | None:
    """The integer in the file at ``path`` (or on its line ``field:``, in kB as in
    ``/proc/meminfo``), or ``None`` where there is none."""
    try:
        with open(path, encoding="ascii") as f:
            text = f.read()
    except (OSError, ValueError):
        return None
    if field is not None:
        found = re.search(rf"^{field}:\s*(\d+) kB$", text, re.MULTILINE)
        return int(found.group(1)) * 1024 if found else None
    return int(text) if text.strip().isdigit() else None


def available_memory_bytes() -> int | None:
    """Memory this process can still allocate, or ``None`` where it is unknown.

    The host's available memory (Linux's ``MemAvailable``: free memory and what the kernel can
    reclaim; elsewhere the free pages), capped by the process's own limits: its container's
    memory limit (cgroup v2 ``memory.max`` or v1 ``memory.limit_in_bytes``) and its address
    space limit (``ulimit -v``) less what it already maps.
    """
    found = [_read_int("/proc/meminfo", "MemAvailable")]
    if found[0] is None and hasattr(os, "sysconf"):
        with contextlib.suppress(ValueError, OSError):
            found[0] = int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    found.append(_read_int("/sys/fs/cgroup/memory.max"))  # "max": no limit
    found.append(_read_int("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
    try:
        import resource
    except ImportError:  # Windows
        pass
    else:
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit != resource.RLIM_INFINITY:
            mapped = _read_int("/proc/self/status", "VmSize") or 0
            found.append(max(0, limit - mapped))
    known = [n for n in found if n is not None]
    return min(known) if known else None


def host_cpu_instance(
    library: DeviceLibrary | None = None, *, cpu: CpuInfo | None = None
) -> DeviceInstance:
    """The host CPU as a :class:`DeviceInstance` (index 0), matched with :func:`match_cpu`.

    ``cpu`` defaults to :func:`detect_cpu`.  Raises :class:`PrismError` when the library has no
    description for the host's family at all (``CpuMatch.description`` is ``None``).
    """
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


# -- accelerators: detection hints, and what software sees of a package ---------------------------


def _own_hints(description: DeviceDescription) -> tuple[list[Any], list[str]]:
    """The PCI entries and product-name patterns written in ``description``'s own file.

    Inherited hints describe a family (every NVIDIA GPU has vendor id 0x10de) and identify no
    particular device, so only a file's own hints can claim a detected device for it.
    """
    from prism_core.kernel.partition_match import own_product_names

    pci = None
    if description.provenance.get("detection.pci") == description.device_type:
        pci = (description.data.get("detection") or {}).get("pci")
    return list(pci or ()), list(own_product_names(description))


def _hint_score(
    description: DeviceDescription,
    vendor_id: str | None,
    device_id: str | None,
    product_name: str | None,
) -> int:
    """How many kinds of ``description``'s own hints the detected device matches (0: none, or
    one of them contradicts it)."""
    pci, names = _own_hints(description)
    if pci and vendor_id is not None and all(e["vendor_id"] != vendor_id.lower() for e in pci):
        return 0  # another vendor's device, whatever its name says
    score = 0
    ids = {
        d
        for entry in pci
        if vendor_id is not None and entry["vendor_id"] == vendor_id.lower()
        for d in entry.get("device_ids", ())
    }
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

    A non-abstract description is a candidate when its own ``detection`` hints (those written
    in its file, not inherited) identify the device: its PCI entry for ``vendor_id`` lists
    ``device_id``, and one of its ``product_names`` matches the whole name, ignoring case.
    Every kind of hint the description gives must match, so a description with product names
    is never claimed by its PCI id alone.  The candidate matching the most kinds wins, then the
    longest lineage, then the device type.  ``None`` when nothing matches.

    The result may be a package (``partitions``): :func:`software_devices` gives the devices
    software sees of it.  Where the driver shows a partition under the package's PCI function
    and name (an MI300X in CPX mode: eight devices named ``AMD Instinct MI300X``), the
    ``compute_units`` and ``memory_bytes`` it reports of the device tell which
    (:func:`match_partition`), and the result is that partition's description.
    """
    lib = _default_library(library)
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
    description: DeviceDescription,
    library: DeviceLibrary | None = None,
    *,
    mode: str | None = None,
) -> tuple[DeviceDescription, ...]:
    """The devices software sees of one detected ``description``, in partition ``mode``
    (default: the driver's default, the first of its ``partitions``).

    A description without ``partitions`` is one device: ``(description,)``.  A package gives
    the descriptions of the devices of its mode, part by part in the file's order (two
    ``amd.mi250x-gcd`` for an ``amd.mi250x``; one 3g.40gb, one 2g.20gb and two 1g.10gb MIG
    instances for an ``nvidia.h100-sxm`` in ``all-balanced``).  Raises :class:`LookupError` for
    a mode the description does not have.
    """
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
            seen.extend([_default_library(library).get(piece.device_type)] * piece.count)
    return tuple(seen)


@home("prism_core.hardware")
@dataclass(frozen=True)
class PresentDevices:
    """The devices present on this host, and for each plugin that found none, why not."""

    devices: tuple[DeviceInstance, ...]
    notes: Mapping[str, str]


def present_devices(library: DeviceLibrary | None = None) -> PresentDevices:
    """Every device present on this host, each an instance of its description.

    The host CPU comes from :func:`host_cpu_instance`; accelerators from the plugins'
    ``prism_detect_devices`` hooks (called once per process).  A detected device of a package
    (a description with ``partitions``) that its name, compute units or memory show to be one
    partition (an MI300X XCD in CPX mode, a MIG instance: :func:`match_partition`) is an
    instance of that partition's description.  Otherwise a detected package becomes the devices
    software sees of it (:func:`software_devices`), in the detection's ``partition_mode`` or
    the driver's default.  A detected device whose ``device_type`` has no description, or whose
    partition mode the description does not have, is left out with a note, as is a CPU family
    the library does not describe.  A device whose ``uuid`` an earlier plugin reported already
    is the same device, and is listed once.  Never raises for "nothing here".
    """
    from prism_core.kernel.plugins import plugins

    lib = _default_library(library)
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
            if dev.device_type not in lib:
                notes[f"{plugin}:{dev.index}"] = (
                    f"{dev.name or dev.device_type}: no description of {dev.device_type!r} "
                    "on the search path"
                )
                continue
            try:
                found.extend(_instances(plugin, dev, lib.get(dev.device_type), lib))
            except LookupError as exc:
                notes[f"{plugin}:{dev.index}"] = f"{dev.name or dev.device_type}: {exc}"
        if not detection.devices:
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


# -- BLAS -------------------------------------------------------------------------------------


def _load_numpy() -> None:
    # threadpoolctl only sees libraries already loaded: NumPy brings in its BLAS.
    with contextlib.suppress(ImportError):
        importlib.import_module("numpy")


def blas_info() -> list[dict[str, Any]]:
    """The BLAS and OpenMP thread pools loaded in this process, as threadpoolctl reports them.

    Each entry has ``user_api`` (``blas`` or ``openmp``), ``internal_api`` (``openblas``,
    ``mkl``, ``blis``, ...), ``version``, ``num_threads``, ``prefix``, ``filepath`` and, where
    threadpoolctl reports them, ``threading_layer`` and ``architecture``.  Imports NumPy first so
    that its BLAS is loaded.  An empty list when threadpoolctl is missing or fails.
    """
    from prism_core.kernel.threads import controllers

    _load_numpy()
    try:
        pools = [controller.info() for controller in controllers()]
    except Exception:
        return []
    return [
        {key: pool[key] for key in _BLAS_KEYS if key in pool}
        for pool in pools
        if pool.get("user_api") in ("blas", "openmp")
    ]


def blas_threads(limit: int) -> contextlib.AbstractContextManager[Any]:
    """Limit the BLAS thread pools to ``limit`` threads inside a ``with`` block.

    A thin wrapper of ``threadpoolctl.threadpool_limits(limits=limit, user_api="blas")``: the
    ``with`` block gets the threadpoolctl limiter, and the original counts come back when it
    ends.  The limit is applied on entering the block, not when this is called.  Environment
    variables (``OMP_NUM_THREADS``, ...) are not touched: they are read only when a library
    loads.  Raises ``ValueError`` for a limit below 1, ``ImportError`` without threadpoolctl.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"a BLAS thread limit is a positive integer, not {limit!r}")
    import threadpoolctl  # type: ignore[import-untyped, unused-ignore]

    @contextlib.contextmanager
    def limited() -> Iterator[Any]:
        _load_numpy()
        with threadpoolctl.threadpool_limits(limits=limit, user_api="blas") as limiter:
            yield limiter

    return limited()


# -- the report -------------------------------------------------------------------------------


@dataclass(frozen=True)
class HostReport:
    """Everything :func:`describe_host` found: for ``prism doctor`` and bug reports."""

    cpu: CpuInfo
    match: CpuMatch
    blas: tuple[Mapping[str, Any], ...] = ()
    memory_bytes: int | None = None
    system: str = ""
    python: str = ""

    @property
    def description(self) -> DeviceDescription | None:
        return self.match.description

    def as_dict(self) -> dict[str, Any]:
        """Plain data that :func:`json.dumps` accepts."""
        return {
            "system": self.system,
            "python": self.python,
            "memory_bytes": self.memory_bytes,
            "cpu": self.cpu.as_dict(),
            "match": self.match.as_dict(),
            "blas": [dict(pool) for pool in self.blas],
        }


def describe_host(
    library: DeviceLibrary | None = None, *, cpu: CpuInfo | None = None
) -> HostReport:
    """Detect the host CPU (unless ``cpu`` is given), match it, and list the BLAS pools."""
    info = detect_cpu() if cpu is None else cpu
    return HostReport(
        cpu=info,
        match=match_cpu(info, library),
        blas=tuple(blas_info()),
        memory_bytes=physical_memory_bytes(),
        system=platform.platform(),
        python=f"{platform.python_implementation()} {platform.python_version()}",
    )
