"""Detection of the NVIDIA GPUs of this host: :mod:`prism_core.nvidia_smi`, shared with the
torch plugin (this module keeps the names it had here)."""

from prism_core.nvidia_smi import (
    NVIDIA_SMI_COMMAND,
    NVIDIA_SMI_TIMEOUT_S,
    SmiGpu,
    detect,
    detection_from_smi,
    match_product_name,
    parse_nvidia_smi,
    run_nvidia_smi,
)

__all__ = [
    "NVIDIA_SMI_COMMAND",
    "NVIDIA_SMI_TIMEOUT_S",
    "SmiGpu",
    "detect",
    "detection_from_smi",
    "match_product_name",
    "parse_nvidia_smi",
    "run_nvidia_smi",
]
