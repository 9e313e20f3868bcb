"""Prism: scientific code that runs well on whatever hardware it finds.

Device descriptions are data (YAML files validated by a JSON Schema); this package loads them,
resolves their inheritance, and answers what a device has and can do.

Public names are loaded on first access (PEP 562, as SciPy's SPEC 1 recommends), so that
``import prism_core`` costs about a millisecond and imports neither YAML nor JSON Schema.
"""

from __future__ import annotations

import importlib

from ._version import __version__

# Not `from typing import TYPE_CHECKING`: importing typing alone costs more than the rest of
# `import prism_core`.  Type checkers treat this name specially all the same.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._backend import Availability, Backend, DetectedDevice, Detection
    from ._config import PluginSettings
    from ._device import DeviceDescription, Feature, MemoryLevel
    from ._errors import (
        DeviceFileError,
        PrismError,
        PrismWarning,
        Problem,
        RequirementError,
        UnknownDeviceError,
    )
    from ._host import CpuInfo, DeviceInstance, PresentDevices, detect_cpu, present_devices
    from ._library import (
        DeviceLibrary,
        FileReport,
        SearchEntry,
        default_search_path,
        devices,
        get_device,
        load_device_file,
        reload_devices,
        validate_paths,
    )
    from ._plugins import PluginError, PluginRecord, PluginSet, plugins, reload_plugins
    from ._requirements import Requirement, RequirementMatch
    from ._schema import device_schema
    from .hookspecs import hookimpl

#: Public name -> the private module that defines it.
_LAZY = {
    "Availability": "_backend",
    "Backend": "_backend",
    "DetectedDevice": "_backend",
    "Detection": "_backend",
    "PluginError": "_plugins",
    "PluginRecord": "_plugins",
    "PluginSet": "_plugins",
    "PluginSettings": "_config",
    "CpuInfo": "_host",
    "DeviceInstance": "_host",
    "PresentDevices": "_host",
    "detect_cpu": "_host",
    "present_devices": "_host",
    "plugins": "_plugins",
    "reload_plugins": "_plugins",
    "hookimpl": "hookspecs",
    "DeviceDescription": "_device",
    "Feature": "_device",
    "MemoryLevel": "_device",
    "DeviceFileError": "_errors",
    "PrismError": "_errors",
    "PrismWarning": "_errors",
    "Problem": "_errors",
    "RequirementError": "_errors",
    "UnknownDeviceError": "_errors",
    "DeviceLibrary": "_library",
    "FileReport": "_library",
    "SearchEntry": "_library",
    "default_search_path": "_library",
    "devices": "_library",
    "get_device": "_library",
    "load_device_file": "_library",
    "reload_devices": "_library",
    "validate_paths": "_library",
    "Requirement": "_requirements",
    "RequirementMatch": "_requirements",
    "device_schema": "_schema",
}

__all__ = [
    "Availability",
    "Backend",
    "CpuInfo",
    "DetectedDevice",
    "Detection",
    "DeviceDescription",
    "DeviceFileError",
    "DeviceInstance",
    "DeviceLibrary",
    "Feature",
    "FileReport",
    "MemoryLevel",
    "PluginError",
    "PluginRecord",
    "PluginSet",
    "PluginSettings",
    "PresentDevices",
    "PrismError",
    "PrismWarning",
    "Problem",
    "Requirement",
    "RequirementError",
    "RequirementMatch",
    "SearchEntry",
    "UnknownDeviceError",
    "__version__",
    "default_search_path",
    "detect_cpu",
    "device_schema",
    "devices",
    "get_device",
    "hookimpl",
    "load_device_file",
    "plugins",
    "present_devices",
    "reload_devices",
    "reload_plugins",
    "validate_paths",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'prism_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
