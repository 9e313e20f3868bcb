"""The device library of this process: the shipped descriptions, the plugins' device
directories and ``PRISM_HARDWARE_PATH``.

The library is a layer below (``prism_core.kernel.description.library``); plugin discovery adds
the plugins' directories to its search path.  The functions here also check each plugin's
device files: invalid ones show on its record, and fail it in strict mode.
"""

from __future__ import annotations

from prism_core.kernel.description import library as _library
from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.description.device_files import SearchEntry, default_search_path
from prism_core.kernel.description.library import (
    DeviceLibrary,
    FileReport,
    load_device_file,
    validate_paths,
)
from prism_core.kernel.plugins import plugins

__all__ = [
    "DeviceLibrary",
    "FileReport",
    "SearchEntry",
    "default_library",
    "default_search_path",
    "devices",
    "get_device",
    "load_device_file",
    "reload_devices",
    "validate_paths",
]


_checked: list[DeviceLibrary | None] = [None]


def default_library() -> DeviceLibrary:
    """The library on the default search path, loaded on first use and then kept."""
    lib = _library.default_library()
    if _checked[0] is not lib:
        _checked[0] = lib
        plugins().check_device_files(lib)
    return lib


def reload_devices() -> DeviceLibrary:
    """Forget the loaded library (after changing ``PRISM_HARDWARE_PATH``) and load it again."""
    _library.reload_devices()
    return default_library()


def devices(
    *, include_abstract: bool = False, kind: str | None = None, vendor: str | None = None
) -> list[DeviceDescription]:
    """All device descriptions on the search path, sorted by device type.

    Families such as ``nvidia.hopper`` are left out unless ``include_abstract`` is true.
    """
    default_library()
    return _library.devices(include_abstract=include_abstract, kind=kind, vendor=vendor)


def get_device(device_type: str) -> DeviceDescription:
    """The resolved description of ``device_type`` (``"nvidia.h100-sxm"``)."""
    default_library()
    return _library.get_device(device_type)
