"""What Prism reports of the host beyond detection: for ``prism doctor``, its CPU and the
description it matches, its BLAS pools, memory, system and Python (:func:`describe_host`); for
the tuner, the memory this process can still allocate (:func:`available_memory_bytes`).
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass

from prism_core._blas import blas_info
from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.description.library import DeviceLibrary
from prism_core.kernel.host import physical_memory_bytes
from prism_core.kernel.host_cpu import CpuInfo, CpuMatch, detect_cpu, match_cpu

__all__ = ["HostReport", "available_memory_bytes", "describe_host"]


@dataclass(frozen=True)
class HostReport:
    """Everything :func:`describe_host` found: for ``prism doctor`` and bug reports."""

    cpu: CpuInfo
    match: CpuMatch
    blas: tuple[Mapping[str, object], ...] = ()
    memory_bytes: int | None = None
    system: str = ""
    python: str = ""

    @property
    def description(self) -> DeviceDescription | None:
        return self.match.description

    def as_dict(self) -> dict[str, object]:
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
    """Memory this process can still allocate, or ``None`` where it is unknown: the host's
    available memory (``MemAvailable``, elsewhere the free pages), capped by the container's
    limit (cgroup v2 ``memory.max`` or v1 ``memory.limit_in_bytes``) and by the address space
    limit (``ulimit -v``) less what the process already maps."""
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
