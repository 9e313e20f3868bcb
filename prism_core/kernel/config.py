"""Where Prism finds its data and reads its environment: every environment variable in one place.

:func:`data_dir` gives the shipped ``hardware`` and ``schemas`` directories, :func:`cache_dir`
the cache directory.  The variables, each with a sentence in :data:`ENVIRONMENT_VARIABLES`:
``PRISM_HARDWARE_PATH``, ``PRISM_CACHE_DIR``, ``PRISM_NO_CACHE``, ``PRISM_DEBUG``,
``PRISM_STRICT_PLUGINS``, ``PRISM_DISABLE_PLUGIN_AUTOLOAD``, ``PRISM_PLUGINS``,
``PRISM_BLOCK_PLUGINS``, ``PRISM_THREADS``, ``PRISM_SIMULATE_DEVICES`` and
``PRISM_HOST_PRICE``.  What each does: docs/architecture.md, "Environment variables".
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from prism_core.kernel.public import home

__all__ = [
    "ENVIRONMENT_VARIABLES",
    "cache_dir",
    "cache_enabled",
    "data_dir",
    "usable_cpus",
    "user_hardware_path",
]

#: The environment variables Prism reads, with a sentence each (``prism doctor`` shows them).
ENVIRONMENT_VARIABLES: Mapping[str, str] = MappingProxyType(
    {
        "PRISM_HARDWARE_PATH": "extra device-file directories, searched after the shipped library",
        "PRISM_CACHE_DIR": "directory of the validation and tuning caches and the CPU's "
        "identification",
        "PRISM_NO_CACHE": "1 disables the validation and tuning caches and the CPU's "
        "identification",
        "PRISM_DEBUG": "1 shows tracebacks of internal CLI errors",
        "PRISM_STRICT_PLUGINS": "1 makes a failing plugin an error",
        "PRISM_DISABLE_PLUGIN_AUTOLOAD": "1 loads no entry-point plugin unless named in "
        "PRISM_PLUGINS",
        "PRISM_PLUGINS": "comma-separated plugins to load (asked for by name: failures are errors)",
        "PRISM_BLOCK_PLUGINS": "comma-separated plugins never to load",
        "PRISM_THREADS": "off stops releasing other backends' thread pools on a change of backend",
        "PRISM_SIMULATE_DEVICES": "comma-separated device types a Dask worker advertises as "
        "simulated",
        "PRISM_HOST_PRICE": "US dollars per hour that a device of this host costs under an "
        "execution policy (unset: its cloud_price, else 0)",
    }
)

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # prism_core/


def data_dir(name: str) -> Path:
    """The shipped ``hardware`` or ``schemas`` directory: inside the package in a built wheel
    (``prism_core/_data/``, see pyproject.toml), else at the top of the repository."""
    packaged = _PACKAGE_DIR / "_data" / name
    return packaged if packaged.is_dir() else _PACKAGE_DIR.parent / name


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class PathEntry:
    """One entry of ``PRISM_HARDWARE_PATH`` as written."""

    text: str
    path: Path


def user_hardware_path() -> list[PathEntry]:
    """Entries of ``PRISM_HARDWARE_PATH`` in order; empty entries are ignored."""
    raw = os.environ.get("PRISM_HARDWARE_PATH", "")
    return [PathEntry(t, Path(t).expanduser()) for t in raw.split(os.pathsep) if t.strip()]


def cache_enabled() -> bool:
    return not _flag("PRISM_NO_CACHE")


def cache_dir() -> Path:
    explicit = os.environ.get("PRISM_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("prism", appauthor=False))


def threads_enabled() -> bool:
    """Whether dispatch releases the other backends' thread pools (``PRISM_THREADS``): ``off``,
    ``0``, ``false``, ``no`` turn it off; unset, empty, ``on``, ``1``, ``true``, ``yes`` leave
    it on; anything else raises ``ValueError`` naming the accepted values."""
    raw = os.environ.get("PRISM_THREADS", "").strip().lower()
    if raw in {"", "1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise ValueError(
        f"PRISM_THREADS={os.environ['PRISM_THREADS']!r}: expected 'on' or 'off' "
        "(or 1/0, true/false, yes/no); unset it for the default, on"
    )


def host_price() -> float | None:
    """What an hour of a device of this host costs, in US dollars (``PRISM_HOST_PRICE``), or
    ``None`` where it is unset or empty.  Any value but a finite number >= 0 raises
    ``ValueError`` naming the variable and what it takes."""
    raw = os.environ.get("PRISM_HOST_PRICE", "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(
            f"PRISM_HOST_PRICE={os.environ['PRISM_HOST_PRICE']!r}: expected what an hour of "
            "this host's devices costs, in US dollars per hour (a number >= 0, such as 2.5); "
            "unset it for the default: a device's cloud_price, else 0"
        )
    return value


def debug_enabled() -> bool:
    return _flag("PRISM_DEBUG")


def simulated_devices() -> tuple[str, ...]:
    """The device types of ``PRISM_SIMULATE_DEVICES``, in order; a name given twice is two
    devices (unlike the plugin lists, repeats are kept)."""
    raw = os.environ.get("PRISM_SIMULATE_DEVICES", "")
    return tuple(n.strip() for n in raw.split(",") if n.strip())


def _names(variable: str) -> tuple[str, ...]:
    raw = os.environ.get(variable, "")
    return tuple(dict.fromkeys(n.strip() for n in raw.split(",") if n.strip()))


@home("prism_core.extending")
@dataclass(frozen=True)
class PluginSettings:
    """The plugin switches in effect (from the environment unless given explicitly)."""

    strict: bool = False
    autoload: bool = True
    allow: tuple[str, ...] = ()
    block: tuple[str, ...] = ()

    @classmethod
    def from_environment(cls) -> PluginSettings:
        return cls(
            strict=_flag("PRISM_STRICT_PLUGINS"),
            autoload=not _flag("PRISM_DISABLE_PLUGIN_AUTOLOAD"),
            allow=_names("PRISM_PLUGINS"),
            block=_names("PRISM_BLOCK_PLUGINS"),
        )


def environment_in_effect() -> dict[str, str]:
    """The Prism environment variables that are set, with their values."""
    return {k: os.environ[k] for k in ENVIRONMENT_VARIABLES if k in os.environ}


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity (``os.sched_getaffinity``, which respects
    a container's cpuset), else ``os.cpu_count()``; at least 1.  Logical CPUs: SMT siblings
    count."""
    with contextlib.suppress(AttributeError, OSError):  # AttributeError: no affinity (macOS)
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)
