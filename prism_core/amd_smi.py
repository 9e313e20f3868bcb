"""Detection of the AMD GPUs of this host through ``amd-smi`` (ROCm 6 and later), else
``rocm-smi``, for backend plugins.

Every plugin on AMD GPUs (PyTorch's, CuPy's, JAX's on ROCm) returns :func:`detect` from its
``prism_detect_devices`` hook; no framework is imported and no HIP context is created.  Parsing
is apart from running the tools, so that it is tested on recorded output; the tools run through
:mod:`prism_core.host_tools` (on ``PATH``, with a timeout).

Each GPU a tool lists is mapped to the description whose own PCI ids and product names match
it (``match_detected_device``).  A package that ROCm can partition (an MI300X: its compute
partitioning SPX … CPX times its memory partitioning NPS1 or NPS4) is listed by the tools once
per partition, so an MI300X in CPX mode is eight GPUs: each is reported as the package with its
``partition_mode`` (``cpx-nps4``) and its memory, from which ``present_devices`` makes it an
instance of the partition's description (``amd.mi300x-xcd``), never a whole MI300X.  An
MI250X's two GCDs are two PCI functions, each matching ``amd.mi250x-gcd`` itself.
docs/architecture.md, "Host detection".
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from prism_core.host_tools import TOOL_TIMEOUT_S, run_tool
from prism_core.host_tools import which as _which
from prism_core.kernel.contract.backend import DetectedDevice, Detection
from prism_core.kernel.errors import describe_exception

if TYPE_CHECKING:
    from prism_core.kernel.description.device import DeviceDescription, Partition

__all__ = [
    "AMD_SMI_LIST_COMMAND",
    "AMD_SMI_STATIC_COMMAND",
    "AMD_SMI_STATIC_PLAIN_COMMAND",
    "AMD_SMI_TIMEOUT_S",
    "AMD_VENDOR_ID",
    "DRIVER_FILES",
    "ROCM_SMI_COMMAND",
    "AmdGpu",
    "detect",
    "detection_from_gpus",
    "driver_absent",
    "parse_amd_smi",
    "parse_rocm_smi",
]

#: What ``amd-smi`` says of each GPU, as JSON: its ASIC (market name, PCI device id), its
#: memory, its driver and its partitions (compute, memory, the partition's number).
AMD_SMI_STATIC_COMMAND = (
    "amd-smi",
    "static",
    "--asic",
    "--vram",
    "--driver",
    "--partition",
    "--json",
)
#: The same without ``--partition``, which an ``amd-smi`` of before ROCm 6.1 and one in a
#: virtual machine do not accept.
AMD_SMI_STATIC_PLAIN_COMMAND = tuple(a for a in AMD_SMI_STATIC_COMMAND if a != "--partition")
#: Each GPU's ``bdf``, ``uuid``, ``kfd_id``, ``node_id`` and ``partition_id``.
AMD_SMI_LIST_COMMAND = ("amd-smi", "list", "--json")
#: ``rocm-smi``'s JSON for the same facts, where there is no ``amd-smi`` (ROCm 5) or it fails.
ROCM_SMI_COMMAND = (
    "rocm-smi",
    "--showproductname",
    "--showuniqueid",
    "--showmeminfo",
    "vram",
    "--showcomputepartition",
    "--showmemorypartition",
    "--showdriverversion",
    "--json",
)
#: How long each tool may take, in seconds (read at each run, so that tests may lower it).
AMD_SMI_TIMEOUT_S: float = TOOL_TIMEOUT_S
AMD_VENDOR_ID = "0x1002"
#: Files that exist where the amdgpu driver is loaded: ROCm's compute device and the module.
DRIVER_FILES = ("/dev/kfd", "/sys/module/amdgpu")
_TOOLS = ("amd-smi", "rocm-smi")
_UNITS = {"b": 1, "kb": 1 << 10, "kib": 1 << 10, "mb": 1 << 20, "mib": 1 << 20}
_UNITS |= {"gb": 1 << 30, "gib": 1 << 30}
_HEX_ID = re.compile(r"0x[0-9a-f]{1,4}", re.IGNORECASE)


@dataclass(frozen=True)
class AmdGpu:
    """One GPU (one partition, where the package is partitioned) as a tool lists it.

    ``compute_partition`` and ``memory_partition`` are the tool's words, lowercased (``"cpx"``,
    ``"nps4"``); ``partition_id`` is the partition's number within its package.
    """

    index: int
    name: str | None
    device_id: str | None = None
    uuid: str | None = None
    memory_bytes: int | None = None
    compute_partition: str | None = None
    memory_partition: str | None = None
    partition_id: int | None = None
    driver: str | None = None


# -- reading the tools' JSON --------------------------------------------------------------------


def _json_document(text: str) -> Any:
    """The JSON document in ``text``, or ``None``: the tools may print a warning line first
    (``amd-smi``: missing ``render``/``video`` groups), so a document may begin at any line."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    for match in re.finditer(r"^[ \t]*[\[{]", text, re.MULTILINE):
        start = match.end() - 1
        try:
            return decoder.raw_decode(text, start)[0]
        except ValueError:
            continue
    return None


def _text(value: object) -> str | None:
    """A string value, ``None`` for the tools' placeholders (``N/A``, empty)."""
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    if not text or text.upper() in {"N/A", "NA", "NONE", "UNKNOWN", "NOT SUPPORTED"}:
        return None
    return text


def _int(value: object) -> int | None:
    text = _text(value)
    if text is None:
        return None
    try:
        return int(text, 0) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return None


def _bytes(value: object, unit: str = "MB") -> int | None:
    """A memory size: ``{"value": 196592, "unit": "MB"}`` (amd-smi's JSON), ``"196592 MB"``
    (older amd-smi) or a bare number in ``unit``.  ROCm's MB are MiB (bytes / 2**20)."""
    if isinstance(value, Mapping):
        return _bytes(value.get("value"), str(value.get("unit") or unit))
    text = _text(value)
    if text is None:
        return None
    found = re.fullmatch(r"([0-9.]+)\s*([A-Za-z]*)", text)
    if found is None:
        return None
    scale = _UNITS.get((found.group(2) or unit).lower())
    try:
        number = float(found.group(1))
    except ValueError:
        return None
    return int(number * scale) if scale is not None and number > 0 else None


def _lower(value: object) -> str | None:
    text = _text(value)
    return None if text is None else text.lower()


def _device_id(value: object) -> str | None:
    """A PCI device id as ``"0x74a1"``; ``None`` for anything else."""
    text = _text(value)
    if text is None or not _HEX_ID.fullmatch(text):
        return None
    return f"0x{int(text, 16):04x}"


def _entries(document: Any) -> list[Mapping[str, Any]] | None:
    """The per-GPU objects of an ``amd-smi`` JSON document: a list of them (ROCm 6.0 to 6.3),
    or ``{"gpu_data": [...]}`` (ROCm 6.4 and later); ``None`` for another shape."""
    if isinstance(document, Mapping) and isinstance(document.get("gpu_data"), list):
        document = document["gpu_data"]
    if not isinstance(document, list):
        return None
    return [e for e in document if isinstance(e, Mapping)]


def parse_amd_smi(static: str, listing: str | None = None) -> tuple[list[AmdGpu], str]:
    """The GPUs of the output of :data:`AMD_SMI_STATIC_COMMAND` (or the plain command), with
    the UUIDs of :data:`AMD_SMI_LIST_COMMAND`'s output ``listing`` where given; and ``""``, or
    why the output could not be read."""
    entries = _entries(_json_document(static))
    if entries is None:
        return [], (
            "amd-smi printed no JSON list of GPUs (no complete JSON document: cut short, or "
            f"not JSON); its output begins {_first_line(static)}"
        )
    uuids: dict[int, str] = {}
    for item in _entries(_json_document(listing or "")) or ():
        gpu, uuid = _int(item.get("gpu")), _text(item.get("uuid"))
        if gpu is not None and uuid is not None:
            uuids[gpu] = uuid
    gpus: list[AmdGpu] = []
    for position, entry in enumerate(entries):
        index = _int(entry.get("gpu"))
        index = position if index is None else index
        asic = _mapping(entry.get("asic"))
        vram = _mapping(entry.get("vram"))
        driver = _mapping(entry.get("driver"))
        partition = _mapping(entry.get("partition"))
        compute = partition.get("compute_partition", partition.get("accelerator_partition"))
        gpus.append(
            AmdGpu(
                index=index,
                name=_text(asic.get("market_name")),
                device_id=_device_id(asic.get("device_id")),
                uuid=uuids.get(index),
                memory_bytes=_bytes(vram.get("size")),
                compute_partition=_lower(compute),
                memory_partition=_lower(partition.get("memory_partition")),
                partition_id=_int(partition.get("partition_id")),
                driver=_text(driver.get("version")),
            )
        )
    return gpus, ""


def parse_rocm_smi(text: str) -> tuple[list[AmdGpu], str]:
    """The GPUs of the output of :data:`ROCM_SMI_COMMAND`, and ``""`` or why it could not be
    read.  ``rocm-smi`` prints one object, ``{"card0": {...}, ..., "system": {...}}``; the keys
    changed over ROCm releases (``Card series`` then ``Card Series``), so they are compared
    ignoring case."""
    document = _json_document(text)
    if not isinstance(document, Mapping):
        begins = _first_line(text)
        return [], (
            "rocm-smi printed no JSON object of cards (no complete JSON document: cut short, or "
            f"not JSON); its output begins {begins}"
        )
    system = {str(k).lower(): v for k, v in _mapping(document.get("system")).items()}
    driver = _text(system.get("driver version"))
    gpus: list[AmdGpu] = []
    for key, card in document.items():
        found = re.fullmatch(r"card(\d+)", str(key))
        if found is None or not isinstance(card, Mapping):
            continue
        fields = {str(k).lower(): v for k, v in card.items()}
        name = _text(fields.get("card series")) or _text(fields.get("device name"))
        model = fields.get("card model", fields.get("device id"))
        gpus.append(
            AmdGpu(
                index=int(found.group(1)),
                name=name,
                device_id=_device_id(model),
                uuid=_text(fields.get("unique id")),
                memory_bytes=_bytes(fields.get("vram total memory (b)"), "B"),
                compute_partition=_lower(fields.get("compute partition")),
                memory_partition=_lower(fields.get("memory partition")),
                driver=driver,
            )
        )
    gpus.sort(key=lambda g: g.index)
    return gpus, ""


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return repr(line.strip()[:120])
    return "(nothing)"


# -- mapping to descriptions ----------------------------------------------------------------------


def _description(library: Any, gpu: AmdGpu) -> DeviceDescription | None:
    """The AMD description the GPU's PCI device id and product name match, or ``None``."""
    from prism_core.kernel.host import match_detected_device

    vendor = AMD_VENDOR_ID if gpu.device_id is not None else None
    found = match_detected_device(
        library, vendor_id=vendor, device_id=gpu.device_id, product_name=gpu.name
    )
    return found if found is not None and found.vendor == "amd" else None


def _modes(package: DeviceDescription, gpu: AmdGpu) -> tuple[list[Partition], dict[str, str]]:
    """The package's partition modes with the GPU's compute and memory partitioning, and those
    dimensions; no modes where the tool did not say or the package has no such mode."""
    known = {d for p in package.partitions for d in p.dimensions}
    said = {"compute": gpu.compute_partition, "memory": gpu.memory_partition}
    dimensions = {k: v for k, v in said.items() if v is not None and k in known}
    if not dimensions:
        return [], {}
    return [p for p in package.partitions if p.matches(**dimensions)], dimensions


def _as_partition(library: Any, package: DeviceDescription, gpu: AmdGpu) -> DetectedDevice:
    """The device to report for a GPU of a package with ``partitions``.

    In a mode that shows the package whole, the package.  In a mode that splits it, the tool
    lists each partition as a GPU of its own, so each is one part: reported as the package with
    its mode and a memory that ``match_partition`` recognises as the part's.  The rocm-smi and
    amd-smi of some releases (ROCm 6.3 and 6.4, a display fault AMD acknowledged) report the
    whole package's memory for every partition; the driver gives each partition an equal share
    (``amdgpu_amdkfd_xcp_memory_size``), so that share is tried next.  Where neither fits, the
    part's own description is reported, without a memory.
    """
    from prism_core.kernel.partition_match import match_partition

    base = DetectedDevice(
        package.device_type,
        index=gpu.index,
        name=gpu.name or package.name,
        uuid=gpu.uuid,
        memory_bytes=gpu.memory_bytes,
        driver=gpu.driver,
    )
    modes, dimensions = _modes(package, gpu)
    if not modes:
        return base  # present_devices judges by name and memory alone
    mode = modes[0].mode if len(modes) == 1 else None
    if all(p.device_types == (package.device_type,) for p in modes):
        return replace(base, partition_mode=mode)
    # Typed as Any: mypy cannot tell these keys from match_partition's other keyword arguments.
    along: dict[str, Any] = dict(dimensions)
    counts = {p.count for p in modes}
    tries = [gpu.memory_bytes]
    if gpu.memory_bytes and len(counts) == 1:
        tries.append(gpu.memory_bytes // counts.pop())
    for memory in tries:
        if not memory:
            continue
        found = match_partition(
            package, library, name=gpu.name, memory_bytes=memory, mode=mode, **along
        )
        if found is not None and not found.whole:
            return replace(base, memory_bytes=memory, partition_mode=mode)
    kinds = {t for p in modes for t in p.device_types}
    if len(kinds) == 1:
        return replace(base, device_type=kinds.pop(), memory_bytes=None)
    return replace(base, partition_mode=mode)


def detection_from_gpus(gpus: Sequence[AmdGpu], library: Any, tool: str = "amd-smi") -> Detection:
    """The :class:`prism_core.extending.Detection` for the GPUs ``tool`` listed.

    A UUID that several partitions of one package share (the tools give a package's unique id
    to each) is made unique by the partition's number, so that ``present_devices``, which keeps
    one device per UUID, keeps every partition.
    """
    shared = Counter(g.uuid for g in gpus if g.uuid is not None)
    devices: list[DetectedDevice] = []
    unmatched: list[str] = []
    for gpu in gpus:
        if gpu.uuid is not None and shared[gpu.uuid] > 1:
            part = gpu.partition_id if gpu.partition_id is not None else gpu.index
            gpu = replace(gpu, uuid=f"{gpu.uuid}/{part}")
        package = _description(library, gpu)
        if package is None:
            pci = gpu.device_id or "unknown"
            unmatched.append(f"{gpu.name or '(no name)'!r} (PCI device {pci})")
            continue
        if package.partitions:
            devices.append(_as_partition(library, package, gpu))
        else:
            devices.append(
                DetectedDevice(
                    package.device_type,
                    index=gpu.index,
                    name=gpu.name or package.name,
                    uuid=gpu.uuid,
                    memory_bytes=gpu.memory_bytes,
                    driver=gpu.driver,
                )
            )
    notes = []
    if unmatched:
        notes.append(
            "no device description matches the AMD GPU "
            + ", ".join(dict.fromkeys(unmatched))
            + "; a description needs detection.pci device_ids and detection.product_names that "
            "match it"
        )
    if not gpus:
        notes.append(f"{tool} lists no GPU")
    return Detection(tuple(devices), "; ".join(notes))


# -- running the tools --------------------------------------------------------------------------


def _run(executable: str, command: Sequence[str]) -> tuple[str | None, str]:
    return run_tool(executable, command[1:], name=command[0], timeout=AMD_SMI_TIMEOUT_S)


def _from_amd_smi(executable: str, library: Any) -> tuple[Detection | None, str]:
    output, why = _run(executable, AMD_SMI_STATIC_COMMAND)
    if output is None:
        # Without --partition, which older releases and virtual machines refuse.
        output, _ = _run(executable, AMD_SMI_STATIC_PLAIN_COMMAND)
    if output is None:
        return None, why
    listing, _ = _run(executable, AMD_SMI_LIST_COMMAND)  # UUIDs; without them, none
    gpus, problem = parse_amd_smi(output, listing)
    if problem:
        return None, problem
    return detection_from_gpus(gpus, library, "amd-smi"), ""


def _from_rocm_smi(executable: str, library: Any) -> tuple[Detection | None, str]:
    output, why = _run(executable, ROCM_SMI_COMMAND)
    if output is None:
        return None, why
    gpus, problem = parse_rocm_smi(output)
    if problem:
        return None, problem
    return detection_from_gpus(gpus, library, "rocm-smi"), ""


def driver_absent() -> str | None:
    """Why no AMD GPU driver can be here, as a sentence, or ``None`` where one may be: there
    is an ``amd-smi`` or ``rocm-smi`` on ``PATH`` or one of :data:`DRIVER_FILES`.  Without the
    amdgpu driver ROCm is unavailable to every framework, so that a framework need not be
    imported to say so.  Runs nothing."""
    if any(_which(t) is not None for t in _TOOLS) or any(os.path.exists(f) for f in DRIVER_FILES):
        return None
    return "no AMD GPU driver on this host (no amd-smi or rocm-smi on PATH, no /dev/kfd)"


def detect(library: Any) -> Detection:
    """The AMD GPUs of this host, from ``amd-smi``, else ``rocm-smi``.  Never raises: an empty
    detection says why there is none."""
    try:
        found: list[tuple[str, str]] = [
            (tool, path) for tool in _TOOLS if (path := _which(tool)) is not None
        ]
        if not found:
            return Detection((), "neither amd-smi nor rocm-smi found: no ROCm on this host")
        failures: list[str] = []
        for tool, executable in found:
            run = _from_amd_smi if tool == "amd-smi" else _from_rocm_smi
            detection, why = run(executable, library)
            if detection is not None:
                return detection
            failures.append(why)
        return Detection((), "; ".join(failures))
    except Exception as exc:  # detection must never take Prism down
        return Detection((), f"AMD detection failed: {describe_exception(exc)}")
