"""Detection of the Huawei Ascend NPUs of this host through ``npu-smi``, for backend plugins.

A plugin on Ascend NPUs (PyTorch's, through torch_npu) returns :func:`detect` from its
``prism_detect_devices`` hook; neither torch_npu nor CANN is imported.  ``npu-smi info`` prints
a table, two rows per chip (here shortened to its first columns)::

    | NPU   Name                | Health        | Power(W)    Temp(C)     ...
    | Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB) ...
    +===========================+===============+=====...
    | 0     910B3               | OK            | 97.5        41          ...
    | 0                         | 0000:C1:00.0  | 0           0    / 0          3379 / 65536 ...

then a table of processes.  Each chip is a device of its own (an Atlas A3 NPU has two, each
with its own bus id, as torch_npu counts them); its name is matched against the non-abstract
Huawei descriptions' ``detection.product_names`` (``910B3`` is ``huawei.ascend-910b``).  The
table has no UUID: the chip's PCI bus id, which is unique on the host, stands for one.
docs/architecture.md, "Host detection".
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
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
    "NPU_SMI_COMMAND",
    "NPU_SMI_TIMEOUT_S",
    "NpuChip",
    "detect",
    "detection_from_npu_smi",
    "driver_absent",
    "parse_npu_smi_info",
]

NPU_SMI_COMMAND = ("npu-smi", "info")
#: How long ``npu-smi`` may take, in seconds (read at each run, so that tests may lower it).
NPU_SMI_TIMEOUT_S: float = TOOL_TIMEOUT_S
#: Files that exist where the Ascend driver is loaded: its device manager and the driver's
#: install directory.
DRIVER_FILES = ("/dev/davinci_manager", "/usr/local/Ascend/driver")
_MIB = 1 << 20
_FIRST_ROW = re.compile(r"(\d+)\s+(\S.*)")
_SECOND_ROW = re.compile(r"(\d+)(?:\s+(\d+))?")
_BUS_ID = re.compile(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]")
_USAGE = re.compile(r"(\d+)\s*/\s*(\d+)")
_VERSION = re.compile(r"Version:\s*(\S+)")


@dataclass(frozen=True)
class NpuChip:
    """One chip of the ``npu-smi info`` table: its NPU's id, its number on the NPU, the NPU's
    name (``910B3``), its health, PCI bus id, physical id (where the table has the column) and
    memory (its HBM, else its DDR)."""

    npu: int
    chip: int
    name: str
    health: str | None = None
    bus_id: str | None = None
    phy_id: int | None = None
    memory_bytes: int | None = None


def _cells(line: str) -> list[str] | None:
    """The cells of a table row (``| a | b | c |``), or ``None`` for a rule or other line."""
    line = line.strip()
    if not line.startswith("|"):
        return None
    return [c.strip() for c in line.strip("|").split("|")]


def parse_npu_smi_info(text: str) -> tuple[list[NpuChip], str | None, list[str]]:
    """Parse the output of :data:`NPU_SMI_COMMAND`: the chips, the driver version of the
    banner (``npu-smi 24.1.1  Version: 24.1.1``), and the rows that could not be read.  The
    process table, after the chips, is not read."""
    chips: list[NpuChip] = []
    unreadable: list[str] = []
    version: str | None = None
    pending: tuple[int, str, str | None] | None = None
    for raw in text.splitlines():
        cells = _cells(raw)
        if cells is None:
            continue
        if version is None and "npu-smi" in cells[0].lower():
            found = _VERSION.search(raw)
            version = found.group(1) if found else None
            continue
        if len(cells) >= 2 and "process" in cells[1].lower():
            break  # the process table
        if cells[0].startswith(("NPU", "Chip")) or cells[0].startswith("No running"):
            continue  # a header
        first = _FIRST_ROW.fullmatch(cells[0])
        second = _SECOND_ROW.fullmatch(cells[0])
        if second is not None and pending is not None and len(cells) >= 2:
            npu, name, health = pending
            pending = None
            bus = cells[1] if _BUS_ID.fullmatch(cells[1]) else None
            usage = _USAGE.findall(cells[2]) if len(cells) >= 3 else []
            total = int(usage[-1][1]) if usage else 0
            phy = second.group(2)
            chips.append(
                NpuChip(
                    npu=npu,
                    chip=int(second.group(1)),
                    name=name,
                    health=health,
                    bus_id=bus,
                    phy_id=None if phy is None else int(phy),
                    memory_bytes=total * _MIB if total > 0 else None,
                )
            )
        elif first is not None and len(cells) >= 2:
            pending = (int(first.group(1)), first.group(2).strip(), cells[1] or None)
        else:
            unreadable.append(raw.strip())
    return chips, version, unreadable


def _product_names(library: Any) -> list[tuple[DeviceDescription, tuple[str, ...]]]:
    """The non-abstract Huawei descriptions and the product names written in their own file."""
    from prism_core.kernel.partition_match import own_product_names

    found = []
    for desc in library.list(vendor="huawei"):
        names = own_product_names(desc)
        if names and not desc.abstract:
            found.append((desc, names))
    return found


def _match(
    name: str, candidates: Sequence[tuple[DeviceDescription, tuple[str, ...]]]
) -> str | None:
    """The device type whose product names match ``name`` (``910B3``, or CANN's
    ``Ascend910B3``), the first in library order."""
    from prism_core.kernel.host_cpu import name_fits

    for desc, names in candidates:
        if name_fits(names, name) or name_fits(names, f"Ascend{name}"):
            return desc.device_type
    return None


def detection_from_npu_smi(text: str, library: Any) -> Detection:
    """The :class:`prism_core.extending.Detection` for the output of :data:`NPU_SMI_COMMAND`:
    one device per chip, numbered in the table's order (torch_npu's)."""
    chips, version, unreadable = parse_npu_smi_info(text)
    candidates = _product_names(library)
    devices: list[DetectedDevice] = []
    unmatched: list[str] = []
    for chip in chips:
        device_type = _match(chip.name, candidates)
        if device_type is None:
            unmatched.append(chip.name)
            continue
        devices.append(
            DetectedDevice(
                device_type,
                index=len(devices),
                name=chip.name if chip.name.startswith("Ascend") else f"Ascend{chip.name}",
                uuid=chip.bus_id,
                memory_bytes=chip.memory_bytes,
                driver=version,
            )
        )
    notes = []
    if unmatched:
        names = ", ".join(repr(n) for n in dict.fromkeys(unmatched))
        notes.append(
            f"no device description matches the NPU name {names} (a description needs a "
            "detection.product_names pattern for it)"
        )
    if chips and unreadable:
        notes.append("npu-smi printed rows that could not be read: " + " | ".join(unreadable))
    if not chips:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        shown = f"; its output begins {lines[0][:120]!r}" if lines else ""
        notes.append(f"npu-smi info lists no NPU{shown}")
    return Detection(tuple(devices), "; ".join(notes))


def run_npu_smi(executable: str) -> tuple[str | None, str]:
    """Run :data:`NPU_SMI_COMMAND`: (its output, "") or (None, why it failed)."""
    return run_tool(executable, NPU_SMI_COMMAND[1:], name="npu-smi", timeout=NPU_SMI_TIMEOUT_S)


def driver_absent() -> str | None:
    """Why no Ascend driver can be here, as a sentence, or ``None`` where one may be: there is
    an ``npu-smi`` on ``PATH`` or one of :data:`DRIVER_FILES`.  Runs nothing."""
    if _which("npu-smi") is not None or any(os.path.exists(f) for f in DRIVER_FILES):
        return None
    return "no Ascend driver on this host (no npu-smi on PATH, no /dev/davinci_manager)"


def detect(library: Any) -> Detection:
    """The Ascend NPUs of this host.  Never raises: an empty detection says why there is none."""
    try:
        executable = _which("npu-smi")
        if executable is None:
            return Detection((), "npu-smi not found: no Ascend driver on this host")
        output, why = run_npu_smi(executable)
        if output is None:
            return Detection((), why)
        return detection_from_npu_smi(output, library)
    except Exception as exc:  # detection must never take Prism down
        return Detection((), f"Ascend detection failed: {describe_exception(exc)}")
