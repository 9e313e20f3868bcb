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
    from ._dispatch import (
        ArraySpec,
        BackendError,
        Candidate,
        Decision,
        DispatchError,
        FallbackRecord,
        FallbackWarning,
        explain,
        fallbacks,
        reset_fallbacks,
    )
    from ._dtypes import (
        DType,
        bfloat16,
        bool_,
        complex64,
        complex128,
        dtype,
        float16,
        float32,
        float64,
        int8,
        int16,
        int32,
        int64,
        uint8,
    )
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
    from ._ops import Op, OperationError, Variant, all_ops, get_op, kernel, operation
    from ._plugins import PluginError, PluginRecord, PluginSet, plugins, reload_plugins
    from ._requirements import Requirement, RequirementMatch
    from ._schema import device_schema
    from ._scope import (
        DeviceNotPresentError,
        Scope,
        current_scope,
        device,
        policy,
        set_backend,
        use_backend,
        use_numpy_backend,
    )
    from .hookspecs import hookimpl

#: Public name -> the private module that defines it.
_LAZY = {
    "ArraySpec": "_dispatch",
    "BackendError": "_dispatch",
    "Candidate": "_dispatch",
    "Decision": "_dispatch",
    "DispatchError": "_dispatch",
    "FallbackRecord": "_dispatch",
    "FallbackWarning": "_dispatch",
    "explain": "_dispatch",
    "fallbacks": "_dispatch",
    "reset_fallbacks": "_dispatch",
    "DType": "_dtypes",
    "bfloat16": "_dtypes",
    "bool_": "_dtypes",
    "complex64": "_dtypes",
    "complex128": "_dtypes",
    "dtype": "_dtypes",
    "float16": "_dtypes",
    "float32": "_dtypes",
    "float64": "_dtypes",
    "int8": "_dtypes",
    "int16": "_dtypes",
    "int32": "_dtypes",
    "int64": "_dtypes",
    "uint8": "_dtypes",
    "Op": "_ops",
    "OperationError": "_ops",
    "Variant": "_ops",
    "all_ops": "_ops",
    "get_op": "_ops",
    "kernel": "_ops",
    "operation": "_ops",
    "DeviceNotPresentError": "_scope",
    "Scope": "_scope",
    "current_scope": "_scope",
    "device": "_scope",
    "policy": "_scope",
    "set_backend": "_scope",
    "use_backend": "_scope",
    "use_numpy_backend": "_scope",
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
    "ArraySpec",
    "Availability",
    "Backend",
    "BackendError",
    "Candidate",
    "CpuInfo",
    "DType",
    "Decision",
    "DetectedDevice",
    "Detection",
    "DeviceDescription",
    "DeviceFileError",
    "DeviceInstance",
    "DeviceLibrary",
    "DeviceNotPresentError",
    "DispatchError",
    "FallbackRecord",
    "FallbackWarning",
    "Feature",
    "FileReport",
    "MemoryLevel",
    "Op",
    "OperationError",
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
    "Scope",
    "SearchEntry",
    "UnknownDeviceError",
    "Variant",
    "__version__",
    "all_ops",
    "bfloat16",
    "bool_",
    "complex64",
    "complex128",
    "current_scope",
    "default_search_path",
    "detect_cpu",
    "device",
    "device_schema",
    "devices",
    "dtype",
    "explain",
    "fallbacks",
    "fft",
    "float16",
    "float32",
    "float64",
    "get_device",
    "get_op",
    "hookimpl",
    "int8",
    "int16",
    "int32",
    "int64",
    "kernel",
    "linalg",
    "load_device_file",
    "operation",
    "plugins",
    "policy",
    "present_devices",
    "random",
    "reload_devices",
    "reload_plugins",
    "reset_fallbacks",
    "set_backend",
    "uint8",
    "use_backend",
    "use_numpy_backend",
    "validate_paths",
]


_NAMESPACES = ("linalg", "fft", "random")
#: Public submodules: `from . import hookspecs` asks this module for the name first, and must
#: get an AttributeError (then the import system loads the submodule), never an op lookup.
_SUBMODULES = frozenset({"hookspecs", "backends"})


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    elif name in _NAMESPACES:
        value = importlib.import_module(f"{__name__}.{name}")
    elif not name.startswith("_") and name not in _SUBMODULES:
        # The operations: prism_core.matmul, prism_core.vector_add, ...
        from ._ops import OperationError, get_op

        try:
            value = get_op(name).function
        except OperationError:
            raise AttributeError(f"module 'prism_core' has no attribute {name!r}") from None
    else:
        raise AttributeError(f"module 'prism_core' has no attribute {name!r}")
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    from ._ops import all_ops

    ops = [n for n in all_ops() if "." not in n]
    return sorted(set(globals()) | set(__all__) | set(ops))
