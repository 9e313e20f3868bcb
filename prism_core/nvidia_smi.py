"""Detection of the NVIDIA GPUs of this host through ``nvidia-smi``, for backend plugins.

Every plugin on NVIDIA GPUs (CuPy's, PyTorch's) returns :func:`detect` from its
``prism_detect_devices`` hook; no framework is imported and no CUDA context is created.  Parsing
is apart from running the command, so that it is tested on captured output; the command runs
through :mod:`prism_core.host_tools` (on ``PATH``, with a timeout, no ``shutil``).  Where a GPU
found is a package that MIG can split (its description has ``partitions``), ``nvidia-smi -L``
is run as well, and each MIG instance it lists is a device of its own, named as CUDA names it
(``NVIDIA H100 80GB HBM3 MIG 1g.10gb``), which Prism maps to the MIG profile's description; a
compute instance (``MIG 1c.3g.40gb``: one of the three compute slices of a 3g.40gb GPU
instance) maps to its share of its GPU instance's description
(``prism_core.kernel.partition_match.compute_instance``).  docs/architecture.md, "Host
detection"; docs/performance.md, "First call in a fresh process".
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prism_core.host_tools import TOOL_TIMEOUT_S, run_tool
from prism_core.host_tools import which as _which
from prism_core.kernel.contract.backend import DetectedDevice, Detection
from prism_core.kernel.errors import describe_exception

if TYPE_CHECKING:
    from prism_core.kernel.description.device import DeviceDescription

__all__ = [
    "DRIVER_FILES",
    "NVIDIA_SMI_COMMAND",
    "NVIDIA_SMI_LIST_COMMAND",
    "NVIDIA_SMI_TIMEOUT_S",
    "SmiGpu",
    "SmiMigDevice",
    "detect",
    "detection_from_smi",
    "driver_absent",
    "match_product_name",
    "parse_mig_listing",
    "parse_nvidia_smi",
    "run_nvidia_smi",
]

#: The query: one CSV line per GPU, ``index, name, uuid, memory.total, driver_version`` (memory
#: in MiB; no header, no units).
NVIDIA_SMI_COMMAND = (
    "nvidia-smi",
    "--query-gpu=index,name,uuid,memory.total,driver_version",
    "--format=csv,noheader,nounits",
)
#: The listing of the GPUs and, under each GPU in MIG mode, its MIG devices:
#: ``GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-…)`` then ``  MIG 1g.10gb  Device  0: (UUID: MIG-…)``.
NVIDIA_SMI_LIST_COMMAND = ("nvidia-smi", "-L")
NVIDIA_SMI_TIMEOUT_S = TOOL_TIMEOUT_S
_MIB = 1 << 20
#: Files that exist where an NVIDIA driver is loaded: its kernel module's directory and control
#: device (Linux), the integrated GPU's control device (Jetson, which may have no nvidia-smi).
DRIVER_FILES = ("/proc/driver/nvidia", "/dev/nvidiactl", "/dev/nvhost-ctrl-gpu")


@dataclass(frozen=True)
class SmiGpu:
    """One line of the ``nvidia-smi`` query."""

    index: int
    name: str
    uuid: str | None
    memory_bytes: int | None
    driver: str | None = None


@dataclass(frozen=True)
class SmiMigDevice:
    """One MIG device of the ``nvidia-smi -L`` listing: its GPU's index, its profile
    (``1g.10gb``), its number among the GPU's MIG devices and its UUID (``MIG-…``)."""

    gpu_index: int
    profile: str
    index: int
    uuid: str | None


def _optional(text: str) -> str | None:
    """``None`` for the placeholders nvidia-smi prints for a missing value."""
    text = text.strip()
    if not text or text.startswith("[") or text.upper() in {"N/A", "NOT SUPPORTED"}:
        return None
    return text


_UUID_PREFIX = re.compile(r"(GPU|MIG)-", re.IGNORECASE)


def _uuid_field(text: str) -> bool:
    """Whether ``text`` is what nvidia-smi prints in the uuid column (``GPU-…``, or a
    placeholder)."""
    return _optional(text) is None or _UUID_PREFIX.match(text) is not None


def parse_nvidia_smi(text: str) -> tuple[list[SmiGpu], list[str]]:
    """Parse the output of :data:`NVIDIA_SMI_COMMAND`: the GPUs, and the lines it could not read.

    The name is the field between the index and the last fields, so that a product name with a
    comma in it still parses.  A line without the driver version (``index, name, uuid,
    memory.total``: the query before ``driver_version`` was added, as captured outputs have it)
    still parses, with ``driver`` ``None``: a line has the driver field when the field third
    from its end is a uuid (``GPU-…``) or a placeholder and the one before the end is not a
    uuid.
    """
    gpus: list[SmiGpu] = []
    unreadable: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4:
            unreadable.append(line)
            continue
        driver_text: str | None = None
        if len(parts) >= 5 and _uuid_field(parts[-3]) and not _UUID_PREFIX.match(parts[-2]):
            driver_text = parts.pop()
        index_text, memory_text, uuid_text = parts[0], parts[-1], parts[-2]
        name = ", ".join(parts[1:-2]).strip()
        try:
            index = int(index_text)
        except ValueError:
            unreadable.append(line)
            continue
        if not name:
            unreadable.append(line)
            continue
        memory = _optional(memory_text)
        try:
            memory_bytes = int(float(memory) * _MIB) if memory is not None else None
        except ValueError:
            memory_bytes = None
        driver = None if driver_text is None else _optional(driver_text)
        gpus.append(SmiGpu(index, name, _optional(uuid_text), memory_bytes, driver))
    return gpus, unreadable


_LISTED_GPU = re.compile(r"GPU (\d+): .*")
_LISTED_MIG = re.compile(r"MIG (\S+)\s+Device\s+(\d+): \(UUID: ([^)]*)\)")


def parse_mig_listing(text: str) -> list[SmiMigDevice]:
    """The MIG devices of the output of :data:`NVIDIA_SMI_LIST_COMMAND`, in its order: each
    ``MIG <profile> Device <n>: (UUID: …)`` line belongs to the ``GPU <i>: …`` line above it.
    Other lines (a GPU without MIG devices, anything unexpected) are skipped."""
    found: list[SmiMigDevice] = []
    gpu: int | None = None
    for raw in text.splitlines():
        line = raw.strip()
        listed = _LISTED_GPU.fullmatch(line)
        if listed is not None:
            gpu = int(listed.group(1))
            continue
        mig = _LISTED_MIG.fullmatch(line)
        if mig is not None and gpu is not None:
            profile, index, uuid = mig.groups()
            found.append(SmiMigDevice(gpu, profile, int(index), _optional(uuid)))
    return found


def _product_patterns(library: Any) -> list[tuple[str, re.Pattern[str]]]:
    """(device type, compiled product-name pattern) of the non-abstract NVIDIA descriptions."""
    out: list[tuple[str, re.Pattern[str]]] = []
    descriptions: Iterable[DeviceDescription] = library.list(vendor="nvidia")
    for desc in descriptions:
        if desc.abstract:
            continue
        detection = desc.data.get("detection") or {}
        for pattern in detection.get("product_names") or ():
            try:
                out.append((desc.device_type, re.compile(pattern, re.IGNORECASE)))
            except re.error:
                continue  # a broken pattern in one file must not stop detection
    return out


def match_product_name(name: str, patterns: Sequence[tuple[str, re.Pattern[str]]]) -> str | None:
    """The device type whose pattern matches the whole ``name`` (the first in library order)."""
    for device_type, pattern in patterns:
        if pattern.fullmatch(name.strip()):
            return device_type
    return None


def detection_from_smi(text: str, library: Any, listing: str | None = None) -> Detection:
    """The :class:`prism_core.extending.Detection` for the output of :data:`NVIDIA_SMI_COMMAND`.

    With ``listing``, the output of :data:`NVIDIA_SMI_LIST_COMMAND`, a GPU in MIG mode is its
    MIG devices instead: each a device of the GPU's device type named ``<GPU name> MIG
    <profile>`` (CUDA's name for it) with its ``MIG-…`` UUID, which ``present_devices`` maps to
    the profile's description; the devices are then numbered in the listing's order, which is
    CUDA's.
    """
    gpus, unreadable = parse_nvidia_smi(text)
    patterns = _product_patterns(library)
    migs: dict[int, list[SmiMigDevice]] = {}
    for mig in parse_mig_listing(listing or ""):
        migs.setdefault(mig.gpu_index, []).append(mig)
    devices: list[DetectedDevice] = []
    unmatched: list[str] = []
    for gpu in gpus:
        device_type = match_product_name(gpu.name, patterns)
        if device_type is None:
            unmatched.append(gpu.name)
            continue
        shown = [(gpu.name, gpu.uuid, gpu.memory_bytes)]
        if gpu.index in migs:
            shown = [(f"{gpu.name} MIG {m.profile}", m.uuid, None) for m in migs[gpu.index]]
        for name, uuid, memory_bytes in shown:
            devices.append(
                DetectedDevice(
                    device_type,
                    index=len(devices) if migs else gpu.index,
                    name=name,
                    uuid=uuid,
                    memory_bytes=memory_bytes,
                    driver=gpu.driver,
                )
            )
    notes = []
    if unmatched:
        names = ", ".join(repr(n) for n in dict.fromkeys(unmatched))
        notes.append(
            f"no device description matches the GPU name {names} (a description needs a "
            "detection.product_names pattern for it)"
        )
    if unreadable:
        notes.append("nvidia-smi printed lines that could not be read: " + " | ".join(unreadable))
    if not gpus and not unreadable:
        notes.append("nvidia-smi lists no GPU")
    return Detection(tuple(devices), "; ".join(notes))


def run_nvidia_smi(
    executable: str, command: Sequence[str] = NVIDIA_SMI_COMMAND
) -> tuple[str | None, str]:
    """Run the query (or another ``command`` of nvidia-smi's): (its output, "") or (None, why
    it failed)."""
    return run_tool(executable, command[1:], name="nvidia-smi", timeout=NVIDIA_SMI_TIMEOUT_S)


def driver_absent() -> str | None:
    """Why no NVIDIA driver can be here, as a sentence, or ``None`` where one may be: there is
    an ``nvidia-smi`` on ``PATH`` or one of :data:`DRIVER_FILES`.  Without a driver CUDA is
    unavailable to every framework, so that a framework need not be imported (torch: about a
    second) to say so.  Runs nothing."""
    if _which("nvidia-smi") is not None or any(os.path.exists(f) for f in DRIVER_FILES):
        return None
    return "no NVIDIA driver on this host (no nvidia-smi on PATH, no /proc/driver/nvidia)"


def _splits(library: Any, device_type: str) -> bool:
    """Whether ``device_type``'s description is a package that shows itself split in some
    mode (MIG)."""
    try:
        return bool(library.get(device_type).partitions)
    except Exception:  # a library without it: nothing to list
        return False


def detect(library: Any) -> Detection:
    """The NVIDIA GPUs of this host.  Never raises: an empty detection says why there is none."""
    try:
        executable = _which("nvidia-smi")
        if executable is None:
            return Detection((), "nvidia-smi not found: no NVIDIA driver on this host")
        output, why = run_nvidia_smi(executable)
        if output is None:
            return Detection((), why)
        found = detection_from_smi(output, library)
        if not any(_splits(library, d.device_type) for d in found.devices):
            return found
        # A GPU that MIG can split: what the driver shows of it (a failed listing leaves the
        # GPUs as the query saw them).
        listing, _ = run_nvidia_smi(executable, NVIDIA_SMI_LIST_COMMAND)
        return found if listing is None else detection_from_smi(output, library, listing)
    except Exception as exc:  # detection must never take Prism down
        return Detection((), f"NVIDIA detection failed: {describe_exception(exc)}")
