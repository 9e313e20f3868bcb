"""Host detection: the CPU this process runs on, the description it matches, and its BLAS.

The CPU is read with archspec and matched against the library's CPU descriptions by the flags
the operating system reports, never by the microarchitecture name alone; BLAS thread pools go
through threadpoolctl.  archspec, threadpoolctl and numpy are imported inside the functions,
and a warm start does not import archspec at all: the CPU's identification is kept in the
cache directory (``host-cpu.json``, :func:`detect_cpu`).  docs/architecture.md, "Host
detection"; the cache and its key: docs/performance.md, "2026-11-25: the CPU from the cache
directory, value types, fewer imports".
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import json
import os
import platform
import re
import sys
import threading
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core.kernel.config import cache_dir, cache_enabled
from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.errors import PrismError, describe_exception
from prism_core.kernel.public import home
from prism_core.kernel.version import __version__

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import DetectedDevice
    from prism_core.kernel.description.library import DeviceLibrary

__all__ = [
    "CpuInfo",
    "CpuMatch",
    "DeviceInstance",
    "HostReport",
    "PresentDevices",
    "blas_info",
    "blas_threads",
    "describe_host",
    "detect_cpu",
    "host_cpu_instance",
    "match_cpu",
    "match_detected_device",
    "normalize_family",
    "present_devices",
    "software_devices",
]

#: ``platform.machine()`` spellings of the families archspec and the device files use.
_FAMILY_ALIASES = {
    "amd64": "x86_64",
    "x64": "x86_64",
    "x86-64": "x86_64",
    "em64t": "x86_64",
    "intel64": "x86_64",
    "arm64": "aarch64",
    "aarch64_be": "aarch64",
    "powerpc64le": "ppc64le",
    "ppc64el": "ppc64le",
}

#: The description a host of a family falls back to when no other one matches: the baseline
#: that every CPU of the family implements.
FALLBACK = {"x86_64": "generic.x86-64", "aarch64": "generic.aarch64"}

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


def normalize_family(machine: str) -> str:
    """The family name of a ``platform.machine()`` value: ``AMD64`` -> ``x86_64``, ``arm64`` ->
    ``aarch64``; other values are lower-cased."""
    name = machine.strip().lower()
    return _FAMILY_ALIASES.get(name, name)


# -- the CPU --------------------------------------------------------------------------------


@home("prism_core.hardware")
@dataclass(frozen=True)
class CpuInfo:
    """What is known about the host CPU.

    ``name`` is archspec's microarchitecture name (``icelake``, ``zen4``, ``neoverse_v1``), or the
    family when archspec is unavailable.  ``features`` is the full set of flags the operating
    system reports (``/proc/cpuinfo`` spelling), which may be fewer than the microarchitecture
    has: virtual machines hide flags.  ``brand`` is the model name (``/proc/cpuinfo``'s
    ``model name`` on Linux), whitespace collapsed, or ``""``.  ``note`` says why information is
    missing (archspec absent or failing), ``""`` when nothing is.  ``source`` is ``"archspec"``
    or ``"platform"`` (the fallback).
    """

    name: str
    vendor: str
    family: str
    features: frozenset[str]
    brand: str = ""
    logical_cpus: int | None = None
    note: str = ""
    source: str = "archspec"

    def has(self, *flags: str) -> bool:
        """Whether the host reports every one of ``flags``."""
        return all(f in self.features for f in flags)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "vendor": self.vendor,
            "family": self.family,
            "brand": self.brand,
            "logical_cpus": self.logical_cpus,
            "features": sorted(self.features),
            "source": self.source,
            "note": self.note,
        }


def _read_model_name() -> str:
    """``model name`` of the first processor in ``/proc/cpuinfo``, or ``""``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, sep, value = line.partition(":")
                if sep and key.strip() == "model name":
                    return value.strip()
    except OSError:
        pass
    return ""


def _brand(archspec_cpu: Any = None) -> str:
    """The CPU's model name, whitespace collapsed (``"Intel(R) Xeon(R) Platinum 8480+"``)."""
    brand = ""
    if sys.platform.startswith("linux"):
        brand = _read_model_name()
    else:
        if archspec_cpu is not None:
            # CPUID on x86, sysctl on macOS; absent from archspec before 0.2.2.
            with contextlib.suppress(Exception):
                brand = archspec_cpu.brand_string() or ""
        if not brand:
            brand = platform.processor()
    return " ".join(str(brand).split())


def _platform_cpu(note: str, brand: str) -> CpuInfo:
    family = normalize_family(platform.machine())
    return CpuInfo(
        name=family or "unknown",
        vendor="",
        family=family,
        features=frozenset(),
        brand=brand,
        logical_cpus=os.cpu_count(),
        note=note,
        source="platform",
    )


#: The host CPU, detected once per process (the CPU does not change under a process; archspec
#: reads /proc/cpuinfo and matches every microarchitecture it knows: about 10 ms).
_detected: list[CpuInfo] = []


def detect_cpu() -> CpuInfo:
    """Detect the host CPU with archspec; never raises.  Detected once per process.

    Without archspec, or when it fails, the result comes from :func:`platform.machine` with no
    features, and ``note`` says why.  archspec's answer is kept in the cache directory
    (``host-cpu.json``), and a later process whose CPU, archspec and Prism are the same takes
    it from there without importing archspec (:func:`_identify_cpu`).
    """
    if not _detected:
        _detected.append(_identify_cpu())
    return _detected[0]


def _detect_cpu() -> CpuInfo:
    try:
        import archspec.cpu  # type: ignore[import-untyped, unused-ignore]
    except Exception as exc:  # ImportError, or a broken installation
        return _platform_cpu(
            f"archspec is not available ({exc}); CPU features are unknown", _brand()
        )
    try:
        # archspec warns (instead of raising) when a detection method fails; a warning is not
        # an error here, and filterwarnings=error in a caller's test suite must not make it one.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            host = archspec.cpu.host()
            notes: list[str] = []
            try:
                # The flags the OS reports: archspec's host() only tells the known features of
                # the microarchitecture it chose, which may be fewer than the host has.
                features = frozenset(archspec.cpu.detect.detected_info().features)
            except Exception as exc:
                features = frozenset()
                notes.append(f"archspec could not list the host's flags ({exc})")
            if not features:
                # macOS on Apple silicon reports no flags; archspec knows them from the model.
                features = frozenset(host.features)
                notes.append(
                    f"features are archspec's list for {host.name}, not flags the OS reported"
                )
            return CpuInfo(
                name=str(host.name),
                vendor=str(host.vendor),
                family=normalize_family(str(host.family.name)),
                features=frozenset(str(f) for f in features),
                brand=_brand(archspec.cpu),
                logical_cpus=os.cpu_count(),
                note="; ".join(notes),
            )
    except Exception as exc:
        return _platform_cpu(
            f"archspec failed to detect the CPU ({describe_exception(exc)}); "
            "CPU features are unknown",
            _brand(),
        )


# -- the CPU's identification, kept across processes --------------------------------
#
# archspec reads the first processor's block of /proc/cpuinfo and matches it against every
# microarchitecture of its database; its answer changes only with those bytes, the system and
# machine (``platform.system``, ``platform.machine``), the database (archspec's version, or
# ARCHSPEC_CPU_DIR and ARCHSPEC_EXTENSION_CPU_DIR), and what this module keeps of it (Prism's
# version).  The key is a digest of them all.  The brand is read afresh (cheap), and so is the
# number of logical CPUs (CPUs go online and offline).  Anything wrong with the file (missing,
# damaged, of another key, an unwritable directory) means archspec is asked, as without the
# cache; nothing of it is ever an error.

#: The file in the cache directory (``PRISM_CACHE_DIR``) that keeps the identification.
CPU_CACHE_FILE = "host-cpu.json"
#: The layout of that file; another layout is a miss.
_CPU_CACHE_FORMAT = 1
#: The /proc file archspec reads on Linux.
_CPUINFO = "/proc/cpuinfo"
#: archspec's variables that replace or extend its database: with one set, its answer depends
#: on files the key does not cover, so the cache is neither read nor written.
_ARCHSPEC_VARIABLES = ("ARCHSPEC_CPU_DIR", "ARCHSPEC_EXTENSION_CPU_DIR")


def _first_processor(path: str = _CPUINFO) -> bytes | None:
    """The lines of ``path``'s first processor block, as archspec reads them (up to the first
    line without a colon), without the ``cpu MHz`` lines, which change from one read to the
    next on hosts that scale their clock and which archspec does not use; ``None`` where the
    file cannot be read (not Linux)."""
    data = b""
    try:
        with open(path, "rb") as fh:
            # One read gives the first block whole (the kernel writes a processor's block at
            # once); read on only where it did not.
            while b"\n\n" not in data and len(data) < (1 << 20):
                chunk = fh.read(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    kept: list[bytes] = []
    for line in data.split(b"\n"):
        if b":" not in line:
            if kept:
                break
            continue
        if not line.startswith(b"cpu MHz"):
            kept.append(line)
    return b"\n".join(kept) if kept else None


def _cpu_cache_key(block: bytes) -> str | None:
    """The digest the identification of a CPU whose /proc/cpuinfo starts with ``block`` is kept
    under, or ``None`` where it must not be kept (archspec's database replaced, archspec not
    installed as a distribution whose version can be read)."""
    if any(os.environ.get(name) for name in _ARCHSPEC_VARIABLES):
        return None
    from prism_core.kernel.plugins import distribution_version

    archspec_version = distribution_version("archspec")
    if archspec_version is None:
        return None
    head = [_CPU_CACHE_FORMAT, __version__, archspec_version, platform.system(), platform.machine()]
    digest = hashlib.sha256(json.dumps(head).encode())
    digest.update(b"\0")
    digest.update(block)
    return digest.hexdigest()


def _cpu_cache() -> tuple[str, str] | None:
    """(path of the cache file, key of this host's entry), or ``None`` where no cache is used:
    ``PRISM_NO_CACHE``, no /proc/cpuinfo, no key (:func:`_cpu_cache_key`), no cache directory."""
    if not cache_enabled():
        return None
    block = _first_processor()
    if block is None:
        return None
    key = _cpu_cache_key(block)
    if key is None:
        return None
    return os.path.join(cache_dir(), CPU_CACHE_FILE), key


def _read_cpu_cache(path: str, key: str) -> CpuInfo | None:
    """The identification kept in ``path`` under ``key``, or ``None`` (no file, another key, a
    damaged or foreign file)."""
    try:
        with open(path, "rb") as fh:
            document = json.loads(fh.read(1 << 20))
        if document.get("format") != _CPU_CACHE_FORMAT or document.get("key") != key:
            return None
        cpu = document["cpu"]
        name, vendor, family = cpu["name"], cpu["vendor"], cpu["family"]
        features = cpu["features"]
        texts = [name, vendor, family, *features]
        if not all(isinstance(t, str) for t in texts) or not isinstance(features, list):
            return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return CpuInfo(
        name=name,
        vendor=vendor,
        family=family,
        features=frozenset(features),
        brand=_brand(),
        logical_cpus=os.cpu_count(),
    )


def _write_cpu_cache(path: str, key: str, cpu: CpuInfo) -> None:
    """Keep ``cpu`` in ``path`` under ``key``: written beside it and moved into place, so that a
    reader sees a whole file or none; silently not where the directory cannot be written."""
    document = {
        "format": _CPU_CACHE_FORMAT,
        "key": key,
        "cpu": {
            "name": cpu.name,
            "vendor": cpu.vendor,
            "family": cpu.family,
            "features": sorted(cpu.features),
        },
    }
    tmp = f"{path}.{os.getpid()}-{threading.get_ident()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(document, fh)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        pass  # a read-only or full cache directory: the next process asks archspec again


def _identify_cpu() -> CpuInfo:
    """The host CPU from the cache directory when its entry is this host's, else from archspec
    (:func:`_detect_cpu`), kept there for the next process when archspec answered in full."""
    try:
        where = _cpu_cache()
    except Exception:  # a broken platformdirs or metadata: the cache is an optimisation only
        where = None
    if where is not None:
        cached = _read_cpu_cache(*where)
        if cached is not None:
            return cached
    info = _detect_cpu()
    if where is not None and info.source == "archspec" and not info.note:
        _write_cpu_cache(*where, info)
    return info


# -- matching against the library -----------------------------------------------------------


@dataclass(frozen=True)
class CpuMatch:
    """The CPU description a host matches, and why the other CPU descriptions did not.

    ``description`` is the most specific non-abstract ``kind: cpu`` description whose
    ``detection`` the host satisfies (most required flags, then longest lineage, then device
    type), or the family baseline (``generic.x86-64``, ``generic.aarch64``; ``fallback`` is then
    true) when none does.  It is ``None`` for a family with no baseline in the library (riscv64,
    ppc64le, an unknown machine); ``reasons`` then says so.

    ``candidates`` lists every description the host satisfies, best first.  ``reasons`` has one
    sentence per rejected description (``"generic.x86-64-v4: host lacks avx512bw, avx512vl"``),
    plus a last sentence when the choice is a fallback or there is none.  ``missing_features``
    maps each rejected description to the detection flags the host lacks (none when it was
    rejected only for its vendor or product name, or for another family: those are not compared
    flag by flag).
    """

    description: DeviceDescription | None
    reasons: tuple[str, ...] = ()
    missing_features: Mapping[str, frozenset[str]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )
    candidates: tuple[str, ...] = ()
    fallback: bool = False

    @property
    def device_type(self) -> str | None:
        return None if self.description is None else self.description.device_type

    def as_dict(self) -> dict[str, Any]:
        return {
            "device_type": self.device_type,
            "name": None if self.description is None else self.description.name,
            "fallback": self.fallback,
            "candidates": list(self.candidates),
            "reasons": list(self.reasons),
            "missing_features": {k: sorted(v) for k, v in sorted(self.missing_features.items())},
        }


def detection_features(description: DeviceDescription) -> frozenset[str]:
    """The CPU flags ``description``'s ``detection.cpu.features`` requires (resolved)."""
    cpu = description.data.get("detection", {}).get("cpu", {})
    return frozenset(cpu.get("features", ()))


def _brand_problem(patterns: list[str], brand: str) -> str | None:
    """``None`` when ``brand`` fullmatches one of ``patterns`` (case-insensitively), else why."""
    for pattern in patterns:
        # The schema validator rejects invalid expressions; one that slips through never matches.
        with contextlib.suppress(re.error):
            if brand and re.fullmatch(pattern, brand, flags=re.IGNORECASE):
                return None
    wanted = " or ".join(repr(p) for p in patterns)
    if not brand:
        return f"needs a product name matching {wanted}; the host's is unknown"
    return f"product name {brand!r} does not match {wanted}"


def _rejections(description: DeviceDescription, cpu: CpuInfo) -> tuple[list[str], frozenset[str]]:
    """Why ``cpu`` does not satisfy ``description``'s detection (no clauses: it does)."""
    detection = description.data.get("detection") or {}
    hints = detection.get("cpu") or {}
    why: list[str] = []
    if not hints and not detection.get("product_names"):
        why.append("has no detection.cpu or detection.product_names to match a host with")
    family = hints.get("family")
    if family is not None and family != cpu.family:
        # Decisive: the vendor, flags and names of another family are not compared.
        why.append(f"is for {family} CPUs; the host is {cpu.family or 'of unknown family'}")
        return why, frozenset()
    vendor = hints.get("vendor")
    if vendor is not None and vendor != cpu.vendor:
        why.append(f"is for {vendor} CPUs; the host's vendor is {cpu.vendor or 'unknown'}")
    missing = detection_features(description) - cpu.features
    if missing:
        why.append("host lacks " + ", ".join(sorted(missing)))
    names = detection.get("product_names")
    if names:
        problem = _brand_problem(list(names), cpu.brand)
        if problem:
            why.append(problem)
    return why, missing


def _specificity(description: DeviceDescription) -> tuple[int, int, str]:
    # Sorted ascending: most required flags first, then longest lineage, then device type.
    return (
        -len(detection_features(description)),
        -len(description.lineage),
        description.device_type,
    )


def _default_library(library: DeviceLibrary | None) -> DeviceLibrary:
    if library is not None:
        return library
    from prism_core.kernel.devices import default_library

    return default_library()


def match_cpu(cpu: CpuInfo, library: DeviceLibrary | None = None) -> CpuMatch:
    """The CPU description of ``library`` (default: the default library) that ``cpu`` matches.

    A non-abstract ``kind: cpu`` description is a candidate when the host satisfies all of its
    resolved ``detection``: ``cpu.family`` and ``cpu.vendor`` equal the host's (when given),
    every flag of ``cpu.features`` is among the host's flags, and one of ``product_names``
    matches the whole brand string, ignoring case (when given).  ``microarchitectures`` is not
    used: the archspec name is a summary that the flags must back.  Never raises; see
    :class:`CpuMatch` for the result, including the fallbacks.
    """
    lib = _default_library(library)
    accepted: list[DeviceDescription] = []
    reasons: list[str] = []
    missing_features: dict[str, frozenset[str]] = {}
    for description in lib.list(kind="cpu"):  # non-abstract, sorted by device type
        why, missing = _rejections(description, cpu)
        if why:
            reasons.append(f"{description.device_type}: {'; '.join(why)}")
            missing_features[description.device_type] = missing
        else:
            accepted.append(description)
    accepted.sort(key=_specificity)
    candidates = tuple(d.device_type for d in accepted)
    missing_view = MappingProxyType(missing_features)
    if accepted:
        return CpuMatch(accepted[0], tuple(reasons), missing_view, candidates)
    baseline = FALLBACK.get(cpu.family)
    if baseline is not None and baseline in lib:
        reasons.append(
            f"no CPU description matches this {cpu.family} host ({cpu.name}); falling back to "
            f"{baseline}, the baseline every {cpu.family} CPU implements"
        )
        return CpuMatch(lib.get(baseline), tuple(reasons), missing_view, candidates, fallback=True)
    reasons.append(
        f"no CPU description matches this {cpu.family or 'unknown'} host ({cpu.name}), and "
        "the library has no baseline for its family; add a description with "
        f"detection.cpu.family: {cpu.family or '<family>'} to PRISM_HARDWARE_PATH"
    )
    return CpuMatch(None, tuple(reasons), missing_view, candidates)


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
        return {
            "device_type": self.device_type,
            "index": self.index,
            "name": self.name,
            "uuid": self.uuid,
            "memory_bytes": self.memory_bytes,
            "source": self.source,
            "simulated": self.simulated,
            "package": self.package,
            "partition": self.partition,
            "driver": self.driver,
            "host_link": self.host_link,
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
    detection = description.data.get("detection") or {}
    own = description.device_type
    pci = detection.get("pci") if description.provenance.get("detection.pci") == own else None
    names = (
        detection.get("product_names")
        if description.provenance.get("detection.product_names") == own
        else None
    )
    return list(pci or ()), list(names or ())


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
        if product_name is None or _brand_problem(names, " ".join(product_name.split())):
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
    try:
        import threadpoolctl  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return []
    _load_numpy()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # threadpoolctl warns about odd OpenMP mixes
            pools = threadpoolctl.threadpool_info()
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
