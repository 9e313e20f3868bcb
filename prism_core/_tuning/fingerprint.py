"""The host fingerprint: what the measurements of a host depend on (its CPU, its devices and
drivers, the versions of Prism, Python, the plugins and the libraries they require, the thread
settings of CPU libraries), and a short digest of it that names the host's tuning file.
docs/performance.md, "The tuning cache", says what it covers.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from prism_core.kernel.version import __version__

__all__ = ["THREAD_VARIABLES", "Fingerprint", "compute_fingerprint"]


def _digest_of(components: Mapping[str, str]) -> str:
    text = json.dumps(sorted(components.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Fingerprint:
    """What the measurements of a host depend on: ``components`` (name -> value, both text),
    and ``digest``, a short SHA-256 of them (sorted) that names the host's tuning file.

    Build one with :meth:`of`; the constructor checks that ``digest`` is that of
    ``components``.
    """

    components: Mapping[str, str] = field(hash=False)
    digest: str

    def __post_init__(self) -> None:
        if not isinstance(self.components, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.components.items()
        ):
            raise ValueError("fingerprint components must map names to strings")
        components = MappingProxyType(dict(sorted(self.components.items())))
        object.__setattr__(self, "components", components)
        if self.digest != _digest_of(components):
            raise ValueError(
                f"digest {self.digest!r} is not that of the components; use Fingerprint.of()"
            )

    @classmethod
    def of(cls, components: Mapping[str, str]) -> Fingerprint:
        return cls(components, _digest_of(components))

    def differences(self, other: Mapping[str, Any]) -> list[str]:
        """What differs between these components and ``other`` (another host's), one phrase
        per component, sorted: ``"cpu.brand: 'X' here, 'Y' there"``."""
        out = []
        for name in sorted(set(self.components) | set(other), key=str):
            mine, theirs = self.components.get(name), other.get(name)
            if mine != theirs:
                out.append(f"{name}: {mine!r} here, {theirs!r} there")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"digest": self.digest, "components": dict(self.components)}


_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _distribution_version(name: str) -> str:
    """The installed version of distribution ``name`` (never imported), or why there is none."""
    version = _versions.get(name)
    if version is None:
        # Plugin discovery reads distributions without importing importlib.metadata, which
        # costs ~35 ms in a fresh process.
        from prism_core.kernel.distributions import distribution_version

        try:
            found = distribution_version(name)
            version = "not installed" if found is None else found or "unknown"
        except Exception as exc:  # a broken installation's metadata
            version = f"unreadable ({type(exc).__name__})"
        _versions[name] = version
    return version


#: The environment variables that set the thread counts of CPU libraries (OpenMP, BLAS): part
#: of the fingerprint where set, since they change how fast a CPU variant runs.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
#: Distribution versions looked up in this process (they cannot change under loaded modules).
_versions: dict[str, str] = {}


def _cpu_components() -> dict[str, str]:
    from prism_core.kernel.host_cpu import detect_cpu

    cpu = detect_cpu()
    flags = hashlib.sha256(" ".join(sorted(cpu.features)).encode()).hexdigest()[:16]
    return {
        "cpu.brand": cpu.brand or "unknown",
        "cpu.name": cpu.name,
        "cpu.flags": flags,
        "cpu.machine": platform.machine(),
        "cpu.count": str(os.cpu_count()),
    }


def _device_components() -> dict[str, str]:
    from prism_core.kernel.host import present_devices

    found = set()
    for inst in present_devices().devices:
        if inst.description.kind == "cpu" and inst.source in ("archspec", "platform"):
            continue  # the host CPU: described by the cpu.* components
        found.add((inst.device_type, inst.uuid or f"{inst.source}:{inst.index}", inst.driver))
    return {
        f"device.{n}": f"{device_type} {uuid} driver {driver or 'unknown'}"
        for n, (device_type, uuid, driver) in enumerate(sorted(found, key=str))
    }


def _software_components() -> dict[str, str]:
    from prism_core.kernel.plugins import Unable, plugins

    out = {
        "prism": __version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "library.numpy": _distribution_version("numpy"),
    }
    for name in THREAD_VARIABLES:  # every CPU library reads some of these
        if name in os.environ:
            out[f"environment.{name}"] = os.environ[name]
    found = plugins()
    for backend in found.backends.values():
        asked = found.backend_settings(backend)  # a plugin's fault is recorded on its plugin
        settings = {"": f"unknown ({asked.error})"} if isinstance(asked, Unable) else dict(asked)
        for key, value in settings.items():
            out[f"setting.{backend.name}.{key}".rstrip(".")] = str(value)
    for record in found.loaded:
        out[f"plugin.{record.name}"] = f"{record.distribution} {record.version}"
        requires = record.info.get("requires") if isinstance(record.info, Mapping) else None
        for requirement in requires if isinstance(requires, (list, tuple)) else ():
            match = _REQUIREMENT_NAME.match(str(requirement))
            if match:
                name = match.group(1).lower().replace("_", "-")
                out[f"library.{name}"] = _distribution_version(name)
    return out


def compute_fingerprint() -> Fingerprint:
    """This host's fingerprint, computed afresh (``tuning_records.host_fingerprint`` keeps it)."""
    components: dict[str, str] = {}
    for part in (_cpu_components, _device_components, _software_components):
        try:
            components.update(part())
        except Exception as exc:  # detection never raises; a plugin in strict mode may
            components[part.__name__.strip("_").replace("_", ".")] = (
                f"unknown ({type(exc).__name__})"
            )
    return Fingerprint.of(components)
