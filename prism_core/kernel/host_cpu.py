"""The host CPU: what archspec detects, kept across processes, and the description it matches.

The CPU is matched against the library's CPU descriptions by the flags the operating system
reports, never by the microarchitecture name alone.  archspec is imported inside the functions,
and not at all on a warm start: the identification is kept in the cache directory
(:func:`detect_cpu`).  docs/architecture.md, "Host detection"; the cache and its key:
docs/performance.md, "2026-11-25: the CPU from the cache directory, value types, fewer imports".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import sys
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from prism_core.kernel.config import cache_dir, cache_enabled
from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.errors import describe_exception
from prism_core.kernel.public import home
from prism_core.kernel.version import __version__

if TYPE_CHECKING:
    from prism_core.kernel.description.library import DeviceLibrary

__all__ = [
    "CPU_CACHE_FILE",
    "FALLBACK",
    "CpuInfo",
    "CpuMatch",
    "detect_cpu",
    "detection_features",
    "match_cpu",
    "name_fits",
    "normalize_family",
]

#: ``platform.machine()`` spellings of the families archspec and the device files use.
_FAMILY_ALIASES = MappingProxyType(
    {
        **dict.fromkeys(("amd64", "x64", "x86-64", "em64t", "intel64"), "x86_64"),
        **dict.fromkeys(("arm64", "aarch64_be"), "aarch64"),
        **dict.fromkeys(("powerpc64le", "ppc64el"), "ppc64le"),
    }
)

#: The description a host of a family falls back to when no other one matches: the baseline
#: that every CPU of the family implements.
FALLBACK = MappingProxyType({"x86_64": "generic.x86-64", "aarch64": "generic.aarch64"})


def library_or_default(library: DeviceLibrary | None) -> DeviceLibrary:
    """``library``, else the default library (loaded with the plugins' device directories)."""
    if library is not None:
        return library
    from prism_core.kernel.devices import default_library

    return default_library()


def normalize_family(machine: str) -> str:
    """The family name of a ``platform.machine()`` value: ``AMD64`` -> ``x86_64``, ``arm64`` ->
    ``aarch64``; other values are lower-cased."""
    name = machine.strip().lower()
    return _FAMILY_ALIASES.get(name, name)


@home("prism_core.hardware")
@dataclass(frozen=True)
class CpuInfo:
    """What is known about the host CPU.

    ``name`` is archspec's microarchitecture name (``icelake``, ``zen4``), or the family without
    archspec.  ``features`` are the flags the operating system reports (``/proc/cpuinfo``
    spelling; virtual machines hide some).  ``brand`` is the model name, whitespace collapsed,
    or ``""``.  ``note`` says why information is missing (archspec absent or failing), ``""``
    when nothing is; ``source`` is ``"archspec"`` or ``"platform"`` (the fallback).
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

    def as_dict(self) -> dict[str, object]:
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
        with open(_CPUINFO, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, sep, value = line.partition(":")
                if sep and key.strip() == "model name":
                    return value.strip()
    except OSError:
        pass
    return ""


def _brand(brand_string: Callable[[], object] | None = None) -> str:
    """The CPU's model name, whitespace collapsed (``"Intel(R) Xeon(R) Platinum 8480+"``);
    off Linux from archspec's ``brand_string`` where given (CPUID on x86, sysctl on macOS)."""
    brand: object = ""
    if sys.platform.startswith("linux"):
        brand = _read_model_name()
    else:
        if brand_string is not None:
            with contextlib.suppress(Exception):
                brand = brand_string() or ""
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


#: The host CPU, detected once per process (archspec takes about 10 ms).
_detected: list[CpuInfo] = []


def detect_cpu() -> CpuInfo:
    """Detect the host CPU with archspec, once per process; never raises.  Without archspec, or
    when it fails, the result comes from :func:`platform.machine` with no features, and ``note``
    says why.  archspec's answer is kept in the cache directory for later processes."""
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
                brand=_brand(getattr(archspec.cpu, "brand_string", None)),  # from 0.2.2
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
# archspec's answer changes only with the first processor's block of /proc/cpuinfo, the system
# and machine, its database (its version, ARCHSPEC_CPU_DIR, ARCHSPEC_EXTENSION_CPU_DIR) and
# Prism's version: the key is a digest of them.  The brand and the number of logical CPUs are
# read afresh.  Anything wrong with the file (missing, damaged, another key, an unwritable
# directory) means archspec is asked, as without the cache; nothing of it is ever an error.

#: The file in the cache directory (``PRISM_CACHE_DIR``) that keeps the identification.
CPU_CACHE_FILE = "host-cpu.json"
_CPU_CACHE_FORMAT = 1  # the layout of that file; another layout is a miss
_CPUINFO = "/proc/cpuinfo"
#: archspec's variables that replace or extend its database: with one set, the cache is neither
#: read nor written (the answer depends on files the key does not cover).
_ARCHSPEC_VARIABLES = ("ARCHSPEC_CPU_DIR", "ARCHSPEC_EXTENSION_CPU_DIR")


def _first_processor(path: str = _CPUINFO) -> bytes | None:
    """The lines of ``path``'s first processor block, as archspec reads them (up to the first
    line without a colon), less the ``cpu MHz`` lines (they change as the clock scales, and
    archspec does not use them); ``None`` where the file cannot be read (not Linux)."""
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
    under, or ``None`` where it must not be kept (archspec's database replaced, or no archspec
    distribution whose version can be read)."""
    if any(os.environ.get(name) for name in _ARCHSPEC_VARIABLES):
        return None
    from prism_core.kernel.distributions import distribution_version

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
    block = _first_processor() if cache_enabled() else None
    key = None if block is None else _cpu_cache_key(block)
    return None if key is None else (os.path.join(cache_dir(), CPU_CACHE_FILE), key)


def _read_cpu_cache(path: str, key: str) -> CpuInfo | None:
    """The identification kept in ``path`` under ``key``, or ``None``."""
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
    return CpuInfo(name, vendor, family, frozenset(features), _brand(), os.cpu_count())


def _write_cpu_cache(path: str, key: str, cpu: CpuInfo) -> None:
    """Keep ``cpu`` in ``path`` under ``key`` (written beside it and moved into place: a reader
    sees a whole file or none); silently not where the directory cannot be written."""
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


@dataclass(frozen=True)
class CpuMatch:
    """The CPU description a host matches, and why the other CPU descriptions did not.

    ``description`` is the most specific non-abstract ``kind: cpu`` description whose
    ``detection`` the host satisfies (most required flags, then longest lineage, then device
    type), else the family baseline (``generic.x86-64``; ``fallback`` is then true), else
    ``None`` (riscv64, an unknown machine).  ``candidates`` lists every description the host
    satisfies, best first.  ``reasons`` has one sentence per rejected description
    (``"generic.x86-64-v4: host lacks avx512bw"``), plus a last one for a fallback or none.
    ``missing_features`` maps each rejected description to the detection flags the host lacks.
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

    def as_dict(self) -> dict[str, object]:
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


def name_fits(patterns: Sequence[str], name: str) -> bool:
    """Whether ``name``, whitespace collapsed, fullmatches one of the product-name ``patterns``
    (``detection.product_names``: regular expressions), ignoring case."""
    name = " ".join(name.split())
    for pattern in patterns:
        # The schema validator rejects invalid expressions; one that slips through never matches.
        with contextlib.suppress(re.error):
            if re.fullmatch(pattern, name, flags=re.IGNORECASE):
                return True
    return False


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
    if names and not (cpu.brand and name_fits(names, cpu.brand)):
        wanted = " or ".join(repr(p) for p in names)
        if not cpu.brand:
            why.append(f"needs a product name matching {wanted}; the host's is unknown")
        else:
            why.append(f"product name {cpu.brand!r} does not match {wanted}")
    return why, missing


def _specificity(description: DeviceDescription) -> tuple[int, int, str]:
    # Sorted ascending: most required flags first, then longest lineage, then device type.
    return (
        -len(detection_features(description)),
        -len(description.lineage),
        description.device_type,
    )


def match_cpu(cpu: CpuInfo, library: DeviceLibrary | None = None) -> CpuMatch:
    """The CPU description of ``library`` (default: the default library) that ``cpu`` matches.

    A non-abstract ``kind: cpu`` description is a candidate when the host satisfies all of its
    resolved ``detection``: ``cpu.family`` and ``cpu.vendor`` (when given) equal the host's,
    every flag of ``cpu.features`` is among the host's, and one of ``product_names`` (when
    given) matches the whole brand, ignoring case; never ``microarchitectures``, a summary the
    flags must back.  Never raises; :class:`CpuMatch` says what the result holds.
    """
    lib = library_or_default(library)
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
