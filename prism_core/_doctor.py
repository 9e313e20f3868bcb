"""``prism doctor``: everything about this installation and host that a bug report needs.

Modelled on ``torch.utils.collect_env`` and ``jax.print_environment_info()``.  Each section is
collected on its own: a missing optional dependency or a broken plugin turns its section into
a sentence saying so, never into a failure of the whole report.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import platform
import sys
from collections.abc import Callable
from typing import Any

from prism_core.kernel.errors import describe_exception

__all__ = ["collect", "render"]

#: Packages whose versions the report shows (missing ones say so).
PACKAGES = (
    "prism-core",
    "numpy",
    "pluggy",
    "PyYAML",
    "jsonschema",
    "archspec",
    "threadpoolctl",
    "platformdirs",
    "packaging",
    "scipy",
    "torch",
    "cupy",
    "jax",
)


def _section(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # a report about a broken environment must not break
        return {"error": describe_exception(exc)}


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def _python() -> dict[str, Any]:
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def _yaml() -> dict[str, Any]:
    import yaml

    return {"libyaml": bool(getattr(yaml, "__with_libyaml__", False))}


def _plugins() -> dict[str, Any]:
    from prism_core._backend_registry import check_capabilities
    from prism_core.kernel.errors import PrismError
    from prism_core.kernel.host import present_devices
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    # A backend's capability method that raises goes on its plugin's record, shown below (in
    # strict mode, the first is an error: recorded all the same).
    with contextlib.suppress(PrismError):
        check_capabilities([d.description for d in present_devices().devices])
    backends = {}
    for name, backend in sorted(ps.backends.items()):
        avail = _section(backend.availability)
        if isinstance(avail, dict):
            backends[name] = {"available": False, "reason": avail["error"]}
        else:
            backends[name] = {
                "available": avail.available,
                "reason": avail.reason,
                "version": avail.version,
                "priority": backend.priority,
            }
            if avail.available:
                # What the runtime says about itself (versions, threads, devices); asked only
                # of available backends, and isolated like every section.
                backends[name]["capabilities"] = _section(backend.capabilities)
    return {
        "plugins": [r.as_dict() for r in ps.records.values()],
        "backends": backends,
    }


def _devices(library: Any) -> dict[str, Any]:
    from prism_core.kernel.host import present_devices

    found = present_devices(library)
    present = [
        {
            "device_type": d.description.device_type,
            "index": d.index,
            "name": d.name,
            "uuid": d.uuid,
            "memory_bytes": d.memory_bytes,
            "source": d.source,
        }
        for d in found.devices
    ]
    # A plugin's sentence is "none_found" where it found nothing; where it found devices too
    # (the torch plugin asks every vendor's tool), a note beside them.
    sources = {d.source for d in found.devices}
    notes = {k: v for k, v in found.notes.items() if k.partition(":")[0] in sources}
    none_found = {k: v for k, v in found.notes.items() if k not in notes}
    return {"present": present, "none_found": none_found, "notes": notes}


def _caches(library: Any) -> dict[str, Any]:
    from prism_core.kernel.config import cache_dir, cache_enabled

    cache = getattr(library, "cache", None)
    path = cache.path if cache is not None else None
    return {
        "validation_cache": str(path) if path else None,
        "enabled": cache_enabled(),
        "exists": bool(path and path.exists()),
        "directory": str(cache_dir()),
        "tuning": _section(_tuning),
    }


def _tuning() -> dict[str, Any]:
    """This host's tuning cache: where it is and what it holds (``prism tune --show`` lists
    it entry by entry)."""
    from prism_core._tuning import tuning_records as tuning

    found = tuning.records()
    return {
        "file": str(tuning.default_store().path),
        "entries": len(found),
        "ops": list(found.ops()),
        "measured": sum(1 for e in found if e.decided == "measured"),
        "calibrated_devices": sorted(found.calibration),
    }


def collect() -> dict[str, Any]:
    """The whole report as JSON-serialisable data."""
    from prism_core.kernel.config import environment_in_effect
    from prism_core.kernel.devices import DeviceLibrary

    library = _section(DeviceLibrary)
    report: dict[str, Any] = {
        "prism": _section(lambda: importlib.metadata.version("prism-core")),
        "python": _section(_python),
        "packages": _section(_versions),
        "yaml": _section(_yaml),
        "environment": _section(environment_in_effect),
    }
    if isinstance(library, dict):  # the library itself failed (a strict plugin error, ...)
        report["library"] = library
        report["plugins"] = _section(_plugins)
        return report
    from prism_core._host_report import describe_host

    report["host"] = _section(lambda: describe_host(library).as_dict())
    every = library.list(include_abstract=True)
    report["library"] = {
        # Counted as `prism devices` counts: devices, and the families (abstract) apart.
        "devices": sum(1 for d in every if not d.abstract),
        "families": sum(1 for d in every if d.abstract),
        "search_path": [{"path": str(e.path), "origin": e.origin} for e in library.entries],
        "problems": [str(p) for p in library.problems],
    }
    report["plugins"] = _section(_plugins)
    report["devices"] = _section(lambda: _devices(library))
    report["caches"] = _section(lambda: _caches(library))
    return report


def _lines(value: Any, indent: str = "  ") -> list[str]:
    if isinstance(value, dict):
        if set(value) == {"error"}:
            return [f"{indent}unavailable: {value['error']}"]
        out = []
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                out.append(f"{indent}{k}:")
                out.extend(_lines(v, indent + "  "))
            else:
                out.append(f"{indent}{k}: {v if v not in (None, '', [], {}) else '-'}")
        return out
    if isinstance(value, list) and all(not isinstance(i, (dict, list)) for i in value):
        # A list of names (CPU flags, hooks): wrapped lines, not one line per name.
        import textwrap

        return textwrap.wrap(
            ", ".join(str(i) for i in value),
            100 - len(indent),
            initial_indent=indent,
            subsequent_indent=indent,
        )
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, dict):
                first, *rest = _lines(item, indent + "  ") or [""]
                out.append(f"{indent}- {first.strip()}")
                out.extend(rest)
            else:
                out.append(f"{indent}- {item}")
        return out
    return [f"{indent}{value}"]


def render(report: dict[str, Any]) -> str:
    """The report as indented text, one section per heading."""
    titles = {
        "prism": "Prism",
        "python": "Python",
        "packages": "Packages",
        "yaml": "YAML",
        "environment": "Environment variables in effect",
        "host": "Host",
        "library": "Device library",
        "plugins": "Plugins and backends",
        "devices": "Devices present",
        "caches": "Caches",
    }
    out = []
    for key, title in titles.items():
        if key not in report:
            continue
        value = report[key]
        if key == "prism":
            out.append(f"Prism {value if isinstance(value, str) else 'unknown version'}")
            continue
        out.append(f"{title}:")
        out.extend(_lines(value) if value not in (None, {}, []) else ["  (none)"])
    return "\n".join(out) + "\n"
