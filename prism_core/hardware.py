"""``prism_core.hardware``: the devices Prism knows and finds.

Device descriptions (YAML files validated by the schema, docs/device-files.md), the library
they are loaded into, and what is present on this host (docs/hardware.md).
"""

from __future__ import annotations

from prism_core._lazy import attach

#: Public name -> the private module that defines it.
_LAZY = {
    "CpuInfo": "_knowledge.host",
    "DeviceDescription": "_description.device",
    "DeviceFileError": "_errors",
    "DeviceInstance": "_knowledge.host",
    "DeviceLibrary": "_knowledge.devices",
    "Feature": "_description.device",
    "FileReport": "_knowledge.devices",
    "Link": "_description.topology",
    "MemoryLevel": "_description.device",
    "NumericFormat": "_description.numeric_formats",
    "Partition": "_description.device",
    "PartitionMatch": "_knowledge.partition_match",
    "PartitionPart": "_description.device",
    "PresentDevices": "_knowledge.host",
    "Problem": "_errors",
    "Requirement": "_description.requirements",
    "RequirementError": "_errors",
    "RequirementMatch": "_description.requirements",
    "SearchEntry": "_knowledge.devices",
    "Sparsity": "_description.sparsity",
    "Throughput": "_description.throughput",
    "TransferPath": "_description.topology",
    "UnknownDeviceError": "_errors",
    "default_search_path": "_knowledge.devices",
    "detect_cpu": "_knowledge.host",
    "device_schema": "_description.schema",
    "devices": "_knowledge.devices",
    "get_device": "_knowledge.devices",
    "load_device_file": "_knowledge.devices",
    "match_detected_device": "_knowledge.host",
    "match_partition": "_knowledge.partition_match",
    "present_devices": "_knowledge.host",
    "reload_devices": "_knowledge.devices",
    "software_devices": "_knowledge.host",
    "standard_format": "_description.numeric_formats",
    "validate_paths": "_knowledge.devices",
}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
