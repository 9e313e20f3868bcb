"""``prism_core.hardware``: the devices Prism knows and finds.

Device descriptions (YAML files validated by the schema, docs/device-files.md), the library
they are loaded into, and what is present on this host (docs/hardware.md).
"""

from __future__ import annotations

from prism_core._lazy import attach

#: Public name -> the private module that defines it.
_LAZY = {
    "CpuInfo": "kernel.host_cpu",
    "DeviceDescription": "kernel.description.device",
    "DeviceFileError": "kernel.errors",
    "DeviceInstance": "kernel.host",
    "DeviceLibrary": "kernel.devices",
    "Feature": "kernel.description.device",
    "FileReport": "kernel.devices",
    "Link": "kernel.description.topology",
    "MemoryLevel": "kernel.description.device",
    "NumericFormat": "kernel.description.numeric_formats",
    "Partition": "kernel.description.device",
    "PartitionMatch": "kernel.partition_match",
    "PartitionPart": "kernel.description.device",
    "PresentDevices": "kernel.host",
    "Problem": "kernel.errors",
    "Requirement": "kernel.description.requirements",
    "RequirementError": "kernel.errors",
    "RequirementMatch": "kernel.description.requirements",
    "SearchEntry": "kernel.devices",
    "Sparsity": "kernel.description.sparsity",
    "Throughput": "kernel.description.throughput",
    "TransferPath": "_transfer_paths",
    "UnknownDeviceError": "kernel.errors",
    "default_search_path": "kernel.devices",
    "detect_cpu": "kernel.host_cpu",
    "device_schema": "kernel.description.schema",
    "devices": "kernel.devices",
    "get_device": "kernel.devices",
    "load_device_file": "kernel.devices",
    "match_detected_device": "kernel.host",
    "match_partition": "kernel.partition_match",
    "present_devices": "kernel.host",
    "reload_devices": "kernel.devices",
    "software_devices": "kernel.host",
    "standard_format": "kernel.description.numeric_formats",
    "validate_paths": "kernel.devices",
}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
